/* outfile.h - writing an output file whole or not at all.
 *
 * Contract:
 *  - A regular file (or a path that does not exist yet) is written to a
 *    temporary file ".NAME.tmp.XXXXXX" in the target's directory, which is
 *    flushed, fsync'ed and renamed over the target only when every write
 *    succeeded.  Until then the target keeps its old content; after a
 *    failure the temporary file is removed, so no partial file is left (bar
 *    the temporary one of a process killed while writing).  The new file
 *    gets the old file's permissions, or 0666 less the umask.
 *    A name too long for that temporary name (NAME_MAX) gets
 *    ".kdalloc.tmp.XXXXXX" instead.
 *  - A symbolic link to a regular file is resolved: the file it points to
 *    is replaced, the link stays.  A link to nothing (or /dev/stdout with
 *    standard output closed) is refused: replacing the link, or creating a
 *    file where it points, is not what the user named.
 *  - An existing target that is not a regular file (/dev/stdout, /dev/full,
 *    a FIFO) cannot be renamed over: it is written directly, and every
 *    write, flush and close is still checked.
 *  - The path "-" is standard output, written directly through a copy of
 *    its descriptor whatever it is (a file it was redirected to is written
 *    where it stands, appended to with >>, never replaced); messages call
 *    it "standard output".
 *  - Every error is one line in err, "PATH: cannot write WHAT: REASON"
 *    (WHAT as given to outfile_open, REASON strerror's), and -1.
 *
 * Use: outfile_check before the work that makes the output (so that a bad
 * path fails at once); outfile_open, then outfile_write or outfile_printf,
 * then outfile_commit (or outfile_abort to give up). */
#ifndef KDA_OUTFILE_H
#define KDA_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct outfile {
    FILE *f;
    const char *path;  /* the target, as the user named it (messages) */
    const char *what;  /* "PNG", "OBJ" (messages) */
    char *target;      /* what is replaced: path, or the file a link points to */
    char *temp;        /* the temporary file, NULL when writing directly */
    int error;         /* errno of the first failed write, 0 if none */
} outfile;

/* Checks that path can be written without writing it: it is not a
 * directory, its directory exists and takes a new file (one is made there
 * and removed), and an existing target is writable.  Returns 0, or -1 with
 * "PATH: cannot write: REASON". */
int outfile_check(const char *path, char *err, size_t errlen);

/* How messages name path: "standard output" for "-", else the path. */
const char *outfile_name(const char *path);

/* Opens the temporary file (or the target itself, see above). */
int outfile_open(outfile *o, const char *path, const char *what, char *err, size_t errlen);

/* Write to the file; after the first failure they do nothing and return
 * -1, and outfile_commit reports that failure's cause. */
int outfile_write(outfile *o, const void *data, size_t n);
int outfile_printf(outfile *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flushes, fsyncs, closes and renames over the target.  On any error the
 * temporary file is removed and err says why.  Frees o either way. */
int outfile_commit(outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file; frees o. */
void outfile_abort(outfile *o);

#endif
