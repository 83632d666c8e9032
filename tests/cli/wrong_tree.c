/* wrong_tree.c - linked into kdalloc-wrongtree only, for test_cli's test of
 * the exit code a failed validation gives (3).  The link wraps
 * kdtree_build_cpu (--wrap): the real CPU build, then every leaf reference
 * pointed at triangle 0, so the tree's hits are not brute force's and
 * `render --cpu --validate` must say so. */
#include "kdtree.h"

int __real_kdtree_build_cpu(const scene *s, kdtree *out, kdtree_stats *stats, char *err, size_t errlen);
int __wrap_kdtree_build_cpu(const scene *s, kdtree *out, kdtree_stats *stats, char *err, size_t errlen);

int __wrap_kdtree_build_cpu(const scene *s, kdtree *out, kdtree_stats *stats, char *err, size_t errlen)
{
    int rc = __real_kdtree_build_cpu(s, out, stats, err, errlen);
    if (rc == 0)
        for (uint32_t i = 0; i < out->n_refs; i++) out->refs[i] = 0;
    return rc;
}
