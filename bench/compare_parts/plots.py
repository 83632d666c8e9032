"""The paper's Figures 3-5 and the survey's curves as PNG, each from its CSV (matplotlib)."""
import os

from .common import log, read_csv
from .survey import survey_csv

# ---------------------------------------------------------------- plots

def curve_styles(variants):
    """A marker, line style and colour per variant, the same in every figure: markers repeat after 12 and
    colours after 10, so no two of up to 60 variants look alike."""
    markers = "osD^v<>pP*Xh"
    return {v.key: {"marker": markers[i % len(markers)], "linestyle": ["-", "--", "-.", ":"][i % 4],
                    "color": "C%d" % (i % 10)} for i, v in enumerate(variants)}


def plot_curves(ax, rows, variants, styles, x, y):
    """One curve per variant that has rows."""
    for v in variants:
        pts = sorted((float(r[x]), float(r[y])) for r in rows if r["allocator"] == v.name)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=v.name, markersize=4, **styles[v.key])


def finish_axes(ax, xlabel, ylabel, logx):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log", base=2)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)


def survey_plots(plt, args, variants, styles):
    """Malloc and free time over the request size, at one requester count per live test."""
    for test, n, who in [("live-warp", 100000, "warps"), ("live-thread", 1000000, "threads")]:
        rows = [r for r in read_csv(survey_csv(args, test)) if int(r["requesters"]) == n]
        if not rows:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, col in zip(axes, ["malloc_ms", "free_ms"]):
            plot_curves(ax, rows, variants, styles, "size", col)
            ax.set_yscale("log")
            ax.set_title("%s, %s %s, all blocks live" % (col.split("_")[0], "{:,}".format(n), who))
            finish_axes(ax, "request size [B]", "kernel time [ms]", True)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "survey_%s.png" % test.replace("-", "_")), dpi=120)
        plt.close(fig)


def plots(args, variants):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("plots skipped: matplotlib is not installed (apt-get install python3-matplotlib)")
        return
    styles = curve_styles(variants)
    scatteralloc = [v for v in variants if v.name.startswith("ScatterAlloc")]
    time_figs = [("fig3a_ad.png", "alloc_ad.csv", variants, "payload", "Alloc Dealloc: payload [B]", True),
                 ("fig3b_acd_pool.png", "alloc_acd_pool.csv", variants, "pool_bytes",
                  "Alloc Cycle Dealloc: pool size [B]", True),
                 ("fig3c_acd_iters.png", "alloc_acd_iters.csv", variants, "iterations",
                  "Alloc Cycle Dealloc: allocations per warp", False),
                 ("fig3d_p.png", "alloc_p.csv", variants, "blocks", "Probability: blocks of 256 threads", True),
                 ("fig4_scatteralloc_pages.png", "alloc_acd_size.csv", scatteralloc, "payload",
                  "Alloc Cycle Dealloc, ScatterAlloc per page size: payload [B]", True)]
    for name, src, shown, x, xlabel, logx in time_figs:
        names = {v.name for v in shown}
        rows = [r for r in read_csv(os.path.join(args.out, src)) if r["allocator"] in names]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        plot_curves(ax, rows, shown, styles, x, "ms")
        ax.set_yscale("log")
        finish_axes(ax, xlabel, "kernel time [ms]", logx)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, name), dpi=120)
        plt.close(fig)
    rows = read_csv(os.path.join(args.out, "alloc_frag.csv"))
    if rows:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, col in zip(axes, ["internal", "external"]):
            plot_curves(ax, rows, variants, styles, "payload", col)
            ax.set_ylim(0, 1)
            finish_axes(ax, "Alloc Dealloc payload [B]", col + " fragmentation [-]", True)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "fig5_fragmentation.png"), dpi=120)
        plt.close(fig)
    survey_plots(plt, args, variants, styles)
    log("wrote the figures")


