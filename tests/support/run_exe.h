/* run_exe.h - running a program as a child process for a test: its exit
 * status and all it wrote to stdout and stderr; and checks of what it
 * said and the files it wrote (test_cli, test_cli_output, test_cli_usage).
 *
 * Contract: the child's stdin is /dev/null and its stdout and stderr go to
 * files under KDA_TEST_TMPDIR named by the test process's id (so tests
 * that run at once keep apart), read back whole and removed; a child that
 * cannot be started or set up fails the test.  Every function here fails
 * or checks through Criterion's assertions, so it is called from tests
 * only. */
#ifndef KDA_RUN_EXE_H
#define KDA_RUN_EXE_H

#include <stddef.h>
#include <stdint.h>

typedef struct run_result {
    int status; /* exit code, or -1 when the child died of a signal */
    char *out;  /* all of stdout */
    char *err;  /* all of stderr */
} run_result;

/* Runs the executable with the NULL-terminated args, stdin from /dev/null,
 * and collects its exit status and output. */
run_result run_exe(const char *exe, const char *const *args);
/* The same with every file the child writes limited to max_bytes (its
 * writes beyond fail with EFBIG, "File too large"): a disk that fills up. */
run_result run_exe_limited(const char *exe, const char *const *args, long max_bytes);
void run_result_free(run_result *r);

/* run_exe with the arguments written out: RUN_EXE(exe, "build", "--cpu"). */
#define RUN_EXE(exe, ...) run_exe((exe), (const char *const[]){__VA_ARGS__, NULL})

/* A file's whole content, NUL-terminated (*len: its size, if len). */
char *read_whole_file(const char *path, size_t *len);
void write_whole_file(const char *path, const char *text);
int file_exists(const char *path);

void expect_status(const run_result *r, int want, const char *what);
void expect_contains(const char *text, const char *needle, const char *what);
/* The file is a whole PNG of width x height: the signature, the IHDR
 * chunk first with that size, and the IEND chunk last. */
void expect_png(const char *path, uint32_t width, uint32_t height);

#endif
