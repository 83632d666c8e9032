/* test_obj_numbers.c - the OBJ loader's own float parsing on fixed hard
 * cases (signed zeros, halfway cases, the float range's ends, subnormals,
 * long mantissas) and 300,000 random decimal strings of several kinds.
 *
 * Oracle: strtof, bit for bit; the set must hold over 100 strings that
 * rounding through double gets wrong. */
#include "test_obj.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static int rng_below(int n) { return (int)(rng() % (uint64_t)n); }

/* A finite float below 1e38 in magnitude, from random bits. */
static float random_float(void)
{
    for (;;) {
        uint32_t bits = (uint32_t)rng();
        float f;
        memcpy(&f, &bits, sizeof f);
        if (isfinite(f) && fabsf(f) < 1e38f) return f;
    }
}

static void random_digits(char *s, int n)
{
    for (int i = 0; i < n; i++) s[i] = (char)('0' + rng_below(10));
    s[n] = '\0';
}

/* One decimal number string of a randomly chosen kind; all are finite as
 * floats. */
static void random_number(char *s, size_t size)
{
    char a[48], b[56];
    switch (rng_below(6)) {
    case 0: /* shortest-ish printing of any float, 1 to 9 digits */
        snprintf(s, size, rng_below(2) ? "%.*g" : "%.*e", 1 + rng_below(9), random_float());
        break;
    case 1: { /* free-form: [sign] digits [. digits] [e[sign]digits] */
        int ni = rng_below(11), nf = rng_below(11);
        if (ni + nf == 0) ni = 1;
        random_digits(a, ni);
        random_digits(b, nf);
        const char *sign = (const char *[]){"", "-", "+"}[rng_below(3)];
        const char *dot = nf || rng_below(2) ? "." : "";
        if (rng_below(2))
            snprintf(s, size, "%s%s%s%s%c%d", sign, a, dot, b, rng_below(2) ? 'e' : 'E',
                     rng_below(51) - 25);
        else
            snprintf(s, size, "%s%s%s%s", sign, a, dot, b);
        break;
    }
    case 2: { /* near or on the midpoint between two adjacent floats */
        float f = random_float();
        double mid = 0.5 * ((double)f + (double)nextafterf(f, INFINITY));
        if (isnormal(f)) snprintf(s, size, "%.*g", 14 + rng_below(4), mid);
        else snprintf(s, size, "%.9g", f);
        break;
    }
    case 3: /* typical OBJ output */
        snprintf(s, size, rng_below(2) ? "%f" : "%g", (rng_below(2000001) - 1000000) * 1e-4);
        break;
    case 4: /* long mantissas, some longer than 64 characters */
        {
            int ni = 1 + rng_below(40);
            random_digits(a, ni);
            random_digits(b, rng_below(50));
            snprintf(s, size, "%s.%se%d", a, b, rng_below(60) - 40 - ni);
        }
        break;
    default: /* up to 2^53 times a power of ten around the fast path's range */
        snprintf(s, size, "%llue%d",
                 (unsigned long long)(rng() >> (11 + rng_below(50))), rng_below(53) - 30);
        break;
    }
}

Test(floats, equal_strtof_bit_for_bit, .timeout = 60)
{
    static const char *const fixed[] = {
        "0", "-0", "0.0", "-0.0", ".5", "5.", "+1", "-.0e0", "1e-5", "-0.108324",
        "3.14159265", "0.1", "0.2", "0.3", "1e22", "1e-22", "1e23", "1e-23",
        "9007199254740992", "9007199254740993", "9007199254740993e-10",
        "3.4028234e38", "3.40282346638528859811704183484516925440e38", "1.17549435e-38",
        "1.1754942e-38", "1e-45", "1.4e-45", "7e-46", "7.1e-46", "1e-50", "0e999",
        "16777217", "16777216.5", "33554435", "0.000000000000000000000000000000000000001",
        "00000000000000000000000000000000000000000000000000000000000000000000001.5",
        "1.000000000000000000000000000000000000000000000000000000000000000000000000001",
        "0.99999999999999999999999999999999999999999999999999999999999999999999999",
    };
    enum { N_RANDOM = 300000 };
    size_t n_fixed = sizeof fixed / sizeof *fixed, n = n_fixed + N_RANDOM;
    n += (3 - n % 3) % 3; /* whole v lines */
    char (*numbers)[128] = malloc(n * sizeof *numbers);
    char *text = malloc(n * 130 + 64);
    cr_assert(numbers && text);
    for (size_t i = 0; i < n; i++) {
        if (i < n_fixed) snprintf(numbers[i], sizeof numbers[i], "%s", fixed[i]);
        else random_number(numbers[i], sizeof numbers[i]);
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i += 3)
        len += (size_t)sprintf(text + len, "v %s %s %s\n", numbers[i], numbers[i + 1],
                               numbers[i + 2]);
    len += (size_t)sprintf(text + len, "f 1 2 3\n");

    scene s;
    cr_assert_eq(scene_parse_obj(text, len, "floats", &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq((size_t)s.n_vertices * 3, n);
    size_t double_rounding_traps = 0;
    for (size_t i = 0; i < n; i++) {
        float want = strtof(numbers[i], NULL), got = s.positions[i];
        cr_expect_eq(memcmp(&got, &want, sizeof got), 0, "\"%s\": got %.9g, strtof %.9g",
                     numbers[i], got, want);
        double_rounding_traps += (float)strtod(numbers[i], NULL) != want;
    }
    /* The set holds strings that rounding through double gets wrong. */
    cr_expect_gt(double_rounding_traps, 100, "only %zu double-rounding traps",
                 double_rounding_traps);
    scene_free(&s);
    free(text);
    free(numbers);
}
