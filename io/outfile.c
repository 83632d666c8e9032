/* outfile.c - writing an output file whole or not at all (outfile.h). */
#define _XOPEN_SOURCE 700 /* realpath, an XSI function of POSIX */
#include "outfile.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* errno after a failed call, never 0 (stdio need not set it). */
static int cause(void)
{
    return errno ? errno : EIO;
}

/* The directory part of path ("." when it has none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (dir) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return dir;
}

/* A symbolic link whose target does not exist (a dangling one, or
 * /dev/stdout with standard output closed): renaming over it would
 * replace the link, and writing through it would create a file elsewhere. */
static int dangling_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

const char *outfile_name(const char *path) { return strcmp(path, "-") ? path : "standard output"; }

/* Whether a file can be made in dir: one is made and removed (0, or the
 * errno of the failure). */
static int probe_dir(const char *dir)
{
    size_t n = strlen(dir) + sizeof "/.kdalloc.probe.XXXXXX";
    char *name = malloc(n);
    if (!name) return ENOMEM;
    snprintf(name, n, "%s/.kdalloc.probe.XXXXXX", dir);
    int fd = mkstemp(name), e = fd < 0 ? cause() : 0;
    if (fd >= 0) {
        close(fd);
        unlink(name);
    }
    free(name);
    return e;
}

int outfile_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!strcmp(path, "-")) {
        if (fstat(STDOUT_FILENO, &st) == 0) return 0;
        snprintf(err, errlen, "standard output: cannot write: %s", strerror(errno));
        return -1;
    }
    int exists = 0;
    size_t len = strlen(path);
    if (len == 0) {
        snprintf(err, errlen, "'': cannot write: the file name is empty");
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: cannot write: it is a directory", path);
            return -1;
        }
        if (access(path, W_OK)) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            return -1;
        }
        if (!S_ISREG(st.st_mode)) return 0; /* a device or FIFO, written directly */
        exists = 1;
    } else if (errno != ENOENT) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno)); /* ENOTDIR, ELOOP, EACCES... */
        return -1;
    } else if (dangling_link(path)) {
        snprintf(err, errlen, "%s: cannot write: a symbolic link to a file that does not exist", path);
        return -1;
    } else if (path[len - 1] == '/') {
        snprintf(err, errlen, "%s: cannot write: no such directory", path);
        return -1;
    }
    /* A new file, or one replaced by rename: its directory must take it. */
    char *real = exists ? realpath(path, NULL) : NULL;
    char *dir = dir_of(real ? real : path);
    int rc = 0;
    if (!dir) {
        snprintf(err, errlen, "%s: cannot write: out of memory", path);
        rc = -1;
    } else if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: cannot write: directory %s: %s", path, dir, strerror(errno));
        rc = -1;
    } else if (access(dir, W_OK | X_OK)) {
        snprintf(err, errlen, "%s: cannot write: directory %s is not writable: %s", path, dir, strerror(errno));
        rc = -1;
    } else if ((rc = probe_dir(dir)) != 0) { /* access() answers yes to root where no file can be made (/proc) */
        snprintf(err, errlen, "%s: cannot write: directory %s takes no new file: %s", path, dir, strerror(rc));
        rc = -1;
    }
    free(dir);
    free(real);
    return rc;
}

static void outfile_free(outfile *o)
{
    free(o->target);
    free(o->temp);
    o->f = NULL;
    o->target = o->temp = NULL;
}

static int open_failed(outfile *o, int e, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: cannot write %s: %s", o->path, o->what, strerror(e));
    outfile_free(o);
    return -1;
}

/* mkstemp's file beside the target, with the permissions the target has
 * (or a new file would get). */
static int open_temp(outfile *o, const struct stat *old)
{
    char *dir = dir_of(o->target);
    const char *slash = strrchr(o->target, '/');
    const char *base = slash ? slash + 1 : o->target;
    size_t n = dir ? strlen(dir) + strlen(base) + sizeof "/..tmp.XXXXXX" : 0;
    o->temp = dir ? malloc(n) : NULL;
    if (!o->temp) {
        free(dir);
        return ENOMEM;
    }
    if (strlen(base) + sizeof ".tmp.XXXXXX" > NAME_MAX) base = "kdalloc"; /* a long name's temporary one */
    snprintf(o->temp, n, "%s/.%s.tmp.XXXXXX", dir, base);
    free(dir);
    int fd = mkstemp(o->temp);
    if (fd < 0) return cause();
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
    } else {
        mode = umask(0); /* reading the umask means setting it */
        umask(mode);
        mode = 0666 & ~mode;
    }
    if (fchmod(fd, mode) || !(o->f = fdopen(fd, "wb"))) {
        int e = cause();
        close(fd);
        unlink(o->temp);
        return e;
    }
    return 0;
}

int outfile_open(outfile *o, const char *path, const char *what, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->path = outfile_name(path);
    o->what = what;
    if (!strcmp(path, "-")) { /* written directly; closing the copy leaves standard output open */
        int fd = dup(STDOUT_FILENO);
        o->f = fd < 0 ? NULL : fdopen(fd, "wb");
        if (!o->f && fd >= 0) close(fd);
        return o->f ? 0 : open_failed(o, cause(), err, errlen);
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists && dangling_link(path)) {
        snprintf(err, errlen, "%s: cannot write %s: a symbolic link to a file that does not exist", path, what);
        return -1;
    }
    if (exists && !S_ISREG(st.st_mode)) { /* not renamed over: written directly */
        o->f = fopen(path, "wb");
        return o->f ? 0 : open_failed(o, cause(), err, errlen);
    }
    o->target = exists ? realpath(path, NULL) : strdup(path);
    if (!o->target) return open_failed(o, cause(), err, errlen);
    int e = open_temp(o, exists ? &st : NULL);
    return e ? open_failed(o, e, err, errlen) : 0;
}

int outfile_write(outfile *o, const void *data, size_t n)
{
    if (o->error) return -1;
    errno = 0;
    if (fwrite(data, 1, n, o->f) != n) {
        o->error = cause();
        return -1;
    }
    return 0;
}

int outfile_printf(outfile *o, const char *fmt, ...)
{
    if (o->error) return -1;
    va_list ap;
    va_start(ap, fmt);
    errno = 0;
    int n = vfprintf(o->f, fmt, ap);
    va_end(ap);
    if (n < 0) o->error = cause();
    return n < 0 ? -1 : 0;
}

int outfile_commit(outfile *o, char *err, size_t errlen)
{
    int e = o->error;
    errno = 0;
    if (!e && fflush(o->f) == EOF) e = cause();
    if (!e && o->temp && fsync(fileno(o->f))) e = cause();
    errno = 0;
    if (fclose(o->f) == EOF && !e) e = cause();
    if (!e && o->temp && rename(o->temp, o->target)) e = cause();
    if (e) {
        if (o->temp) unlink(o->temp);
        snprintf(err, errlen, "%s: cannot write %s: %s", o->path, o->what, strerror(e));
    }
    outfile_free(o);
    return e ? -1 : 0;
}

void outfile_abort(outfile *o)
{
    fclose(o->f);
    if (o->temp) unlink(o->temp);
    outfile_free(o);
}
