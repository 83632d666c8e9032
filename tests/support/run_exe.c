/* run_exe.c - running a program as a child process for a test, and
 * checking what it said and wrote (run_exe.h). */
#define _XOPEN_SOURCE 700 /* setrlimit, an XSI function of POSIX */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_exe.h"

char *read_whole_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (size_t n; (n = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (cap - len == 1) {
            cap *= 2;
            text = realloc(text, cap);
            cr_assert_not_null(text);
        }
    }
    fclose(f);
    text[len] = '\0';
    if (len_out) *len_out = len;
    return text;
}

void write_whole_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Redirects fd to a new file at path (in the child). */
static void redirect(int fd, const char *path, int flags)
{
    int file = open(path, flags, 0644);
    if (file < 0 || dup2(file, fd) < 0) _exit(126);
    close(file);
}

run_result run_exe_limited(const char *exe, const char *const *args, long max_bytes)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, KDA_TEST_TMPDIR "/run_exe_%ld.out", (long)getpid());
    snprintf(err_path, sizeof err_path, KDA_TEST_TMPDIR "/run_exe_%ld.err", (long)getpid());
    const char *argv[64] = {exe};
    int argc = 1;
    for (; args[argc - 1]; argc++) {
        cr_assert_lt(argc, 63, "too many arguments");
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;

    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
        redirect(STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC);
        redirect(STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC);
        if (max_bytes > 0) {
            /* Ignored, SIGXFSZ stays ignored across exec: a write beyond
             * the limit then fails with EFBIG instead of killing. */
            struct rlimit limit = {(rlim_t)max_bytes, (rlim_t)max_bytes};
            if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit(RLIMIT_FSIZE, &limit)) _exit(126);
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid, "waitpid: %s", strerror(errno));
    run_result r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_whole_file(out_path, NULL),
                    read_whole_file(err_path, NULL)};
    cr_assert_neq(r.status, 127, "cannot run %s", exe);
    cr_assert_neq(r.status, 126, "cannot set up the child for %s", exe);
    unlink(out_path);
    unlink(err_path);
    return r;
}

run_result run_exe(const char *exe, const char *const *args)
{
    return run_exe_limited(exe, args, 0);
}

void run_result_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

void expect_status(const run_result *r, int want, const char *what)
{
    cr_expect_eq(r->status, want, "%s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r->status, want,
                 r->out, r->err);
}

void expect_contains(const char *text, const char *needle, const char *what)
{
    cr_expect(strstr(text, needle) != NULL, "%s: no \"%s\" in:\n%s", what, needle, text);
}

static uint32_t big_endian_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void expect_png(const char *path, uint32_t width, uint32_t height)
{
    cr_assert(file_exists(path), "%s was not written", path);
    size_t n;
    unsigned char *png = (unsigned char *)read_whole_file(path, &n);
    /* signature 8, IHDR 25, IEND 12 */
    cr_assert_geq(n, 8 + 25 + 12, "%s: only %zu bytes", path, n);
    cr_expect(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: no PNG signature", path);
    cr_expect(memcmp(png + 12, "IHDR", 4) == 0, "%s: no IHDR chunk first", path);
    cr_expect_eq(big_endian_u32(png + 16), width, "%s: width %u", path, big_endian_u32(png + 16));
    cr_expect_eq(big_endian_u32(png + 20), height, "%s: height %u", path, big_endian_u32(png + 20));
    /* The IEND chunk: length 0, type, and its fixed CRC. */
    cr_expect(memcmp(png + n - 12, "\0\0\0\0IEND\xae\x42\x60\x82", 12) == 0, "%s: does not end in IEND", path);
    free(png);
}
