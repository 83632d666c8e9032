/* objbench.c - OBJ parse-speed benchmark.
 *
 *   kdalloc-objbench FILE [FILE...]   (--help, --version)
 *
 * For each file (plain or gzip OBJ), one warm-up round and then RUNS timed
 * rounds, each reading the whole text through zlib and then parsing it from
 * memory with scene_parse_obj.  Reading (decompression included) and parsing
 * are timed separately; the table shows the median of each.  MB = 10^6 bytes
 * of uncompressed OBJ text.  Exit status: 0, 1 if a file failed, 2 on usage.
 */
#include "scene.h"
#include "stdout_status.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#ifndef KDA_VERSION
#define KDA_VERSION "unknown"
#endif

enum { RUNS = 5 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads all of `path` through zlib (plain files pass through unchanged) into
 * a malloc'ed buffer; prints why and returns NULL on failure. */
static char *read_text(const char *path, size_t *len)
{
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        fprintf(stderr, "objbench: %s: cannot open: %s\n", path,
                errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    gzbuffer(gz, 1 << 18);
    size_t cap = (size_t)1 << 24, n = 0;
    char *buf = malloc(cap);
    int got = 0;
    while (buf) {
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap);
            if (!bigger) free(buf);
            buf = bigger;
            cap *= 2;
            continue;
        }
        size_t want = cap - n < INT_MAX ? cap - n : INT_MAX;
        got = gzread(gz, buf + n, (unsigned)want);
        if (got <= 0) break;
        n += (size_t)got;
    }
    int zerr;
    const char *msg = gzerror(gz, &zerr);
    if (!buf) {
        fprintf(stderr, "objbench: %s: out of memory\n", path);
    } else if (got < 0) {
        fprintf(stderr, "objbench: %s: %s\n", path, msg);
        free(buf);
        buf = NULL;
    }
    /* gzclose_r reports a stream that ended early (truncated gzip). */
    if (gzclose_r(gz) != Z_OK && buf) {
        fprintf(stderr, "objbench: %s: truncated or corrupt gzip data\n", path);
        free(buf);
        buf = NULL;
    }
    *len = n;
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Benchmarks one file and prints its table row; returns 0 or -1. */
static int bench_file(const char *path)
{
    double t_read[RUNS], t_parse[RUNS];
    size_t len = 0;
    scene s;
    char err[512];
    for (int run = -1; run < RUNS; run++) { /* run -1: warm-up */
        double t0 = now_s();
        char *text = read_text(path, &len);
        if (!text) return -1;
        double t1 = now_s();
        int rc = scene_parse_obj(text, len, path, &s, err, sizeof err);
        double t2 = now_s();
        free(text);
        if (rc) {
            fprintf(stderr, "objbench: %s\n", err);
            return -1;
        }
        if (run >= 0) {
            t_read[run] = t1 - t0;
            t_parse[run] = t2 - t1;
        }
        if (run < RUNS - 1) scene_free(&s);
    }
    double mb = 1e-6 * (double)len, tr = median(t_read, RUNS), tp = median(t_parse, RUNS);
    const char *base = strrchr(path, '/');
    printf("%-26s %9.2f %10u %10u %9.1f %9.1f %9.1f %9.1f\n", base ? base + 1 : path, mb,
           s.n_vertices, s.n_triangles, 1e3 * tr, mb / tr, 1e3 * tp, mb / tp);
    scene_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each row as it is measured, into a pipe too */
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: kdalloc-objbench FILE.obj[.gz] [FILE...]\n\n"
               "Times reading (gzip decompression included) and parsing each OBJ file:\n"
               "one warm-up round, then the median of %d rounds.  Exit status 0, 1 if a\n"
               "file failed, 2 on a usage error.\n\n"
               "  -h, --help          this help\n"
               "  --version           print the version\n",
               RUNS);
        return stdout_status("kdalloc-objbench", 0);
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("kdalloc-objbench %s\n", KDA_VERSION);
        return stdout_status("kdalloc-objbench", 0);
    }
    if (argc < 2) {
        fprintf(stderr, "kdalloc-objbench: which files? (see kdalloc-objbench --help)\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "kdalloc-objbench: unknown option %s (see kdalloc-objbench --help)\n", argv[i]);
            return 2;
        }
    printf("%d timed runs after 1 warm-up; medians; MB = 10^6 bytes of OBJ text\n", RUNS);
    printf("%-26s %9s %10s %10s %9s %9s %9s %9s\n", "file", "text MB", "vertices",
           "triangles", "read ms", "read MB/s", "parse ms", "parse MB/s");
    int status = 0;
    for (int i = 1; i < argc; i++)
        if (bench_file(argv[i])) status = 1;
    return status;
}
