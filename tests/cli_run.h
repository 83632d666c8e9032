/* cli_run.h - what the command-line tests (test_cli, test_cli_output)
 * share: running a program as a child process, collecting its exit status
 * and output, and checking what it said and the files it wrote.  The
 * checks are Criterion assertions, so they are called from tests only. */
#ifndef KDA_CLI_RUN_H
#define KDA_CLI_RUN_H

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

#define KDALLOC(...) run_exe(KDALLOC_EXE, (const char *const[]){__VA_ARGS__, NULL})

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
