/*
 * plot_svg.c — persistence diagrams and barcodes as standalone SVG files
 * that can go into a paper as they are: axes with ticks and labels, one
 * colour per dimension (the Okabe–Ito palette, which stays distinct for
 * colour-blind readers and in greyscale print) with a legend, the diagonal,
 * and infinite deaths drawn on a dashed line marked with the infinity sign.
 * Bars cut off by the threshold of the computation (alive at it, their death
 * unknown) end on a dashed line at the threshold, labelled with its value:
 * drawing them at infinity would make them look essential.
 *
 * Only drawing; reading files and choosing dimensions is cmd_features.c's.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plot_svg.h"

static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
#define N_COLOURS (sizeof palette / sizeof palette[0])
#define FONT "font-family=\"Helvetica, Arial, sans-serif\""

static const char *colour(uint32_t dim)
{
    return palette[dim % N_COLOURS];
}

static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Every value is drawn through a frame where the data are of order one:
 * u = v / 10^e. Far from 1 (1e-310, 1e308) differences and scales of the raw
 * values would underflow or overflow to 0, inf or nan; in the frame they
 * cannot. 10^-e is applied as two factors so neither leaves the range of
 * double. e is 0 for everyday values, so their labels read as before. */
typedef struct frame {
    int e;
    double f1, f2;
} frame;

static frame frame_for(double lo, double hi)
{
    frame fr = {0, 1.0, 1.0};
    const double m = fmax(fabs(lo), fabs(hi));
    if (m > 0.0 && isfinite(m)) {
        int e = (int)floor(log10(m));
        if (e > 12 || e < -12) {
            fr.e = e;
            fr.f1 = pow(10.0, -(e / 2));
            fr.f2 = pow(10.0, -(e - e / 2));
        }
    }
    return fr;
}

static double to_frame(const frame *fr, double v)
{
    return fr->e == 0 ? v : v * fr->f1 * fr->f2;
}

/* Ticks at multiples of a 1-2-5 step, about `target` of them over the
 * range, and the range widened to whole steps. All in frame units. */
typedef struct axis {
    double lo, hi, step;
    int n_ticks;  /* ticks at lo + i * step, i = 0 .. n_ticks - 1 */
    int decimals; /* for labels; -1: use %g */
    int e;        /* the frame's exponent: labels are value * 10^e */
} axis;

#define MAX_TICKS 64

static axis nice_axis(double lo, double hi, int target, const frame *fr)
{
    axis a;
    a.e = fr->e;
    /* A range too narrow for the values' precision (1e15 and the next
     * double) has no 1-2-5 step that advances from one tick to the next:
     * draw it as one value. */
    if (!(hi - lo > 1e-9 * fmax(fabs(lo), fabs(hi)))) {
        /* One value only: a unit range from 0 (say, one bar born at 0 that
         * never dies), else half the value on each side. */
        if (lo == 0.0 && hi == 0.0) {
            hi = 1.0;
        } else {
            double c = 0.5 * (lo + hi), w = fabs(c) * 0.5;
            lo = c - w;
            hi = c + w;
        }
    }
    double raw = (hi - lo) / target;
    double e = floor(log10(raw)), m = raw / pow(10.0, e);
    double nm = m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10;
    a.step = nm * pow(10.0, e);
    /* The small tolerance keeps a bound that is a whole step already (up to
     * rounding) from growing by one more. */
    a.lo = floor(lo / a.step + 1e-9) * a.step;
    a.hi = ceil(hi / a.step - 1e-9) * a.step;
    double n = floor((a.hi - a.lo) / a.step + 0.5) + 1;
    a.n_ticks = n >= 1 && n <= MAX_TICKS ? (int)n : n > MAX_TICKS ? MAX_TICKS : 1;
    double ex = e + (nm == 10 ? 1 : 0);
    a.decimals = ex >= 0 ? 0 : (int)-ex;
    if (fmax(fabs(a.lo), fabs(a.hi)) >= 1e6 || a.decimals > 6)
        a.decimals = -1;
    return a;
}

static double tick_at(const axis *a, int i)
{
    return a->lo + i * a->step;
}

static void tick_label(char *buf, size_t n, const axis *a, double v)
{
    if (fabs(v) < a->step * 1e-9)
        v = 0.0; /* no "-0" */
    if (a->e != 0 && v == 0.0) {
        snprintf(buf, n, "0");
    } else if (a->e != 0) {
        /* v * 10^e written as mantissa and exponent: the product itself may
         * not be a double. */
        char m[40];
        snprintf(m, sizeof m, "%.5e", v);
        char *x = strchr(m, 'e');
        int ex = atoi(x + 1) + a->e;
        *x = '\0';
        char *z = x;
        while (z > m && z[-1] == '0')
            *--z = '\0';
        if (z > m && z[-1] == '.')
            z[-1] = '\0';
        snprintf(buf, n, "%se%+d", m, ex);
    } else if (a->decimals < 0) {
        snprintf(buf, n, "%g", v);
    } else {
        snprintf(buf, n, "%.*f", a->decimals, v);
    }
}

/* Is pair i drawn as cut off at the threshold (one is known)? */
static bool cut_at_threshold(const plot_spec *s, const plot_series *se, uint64_t i)
{
    return se->cut != NULL && se->cut[i] && isfinite(s->threshold) &&
           s->threshold >= se->pairs[i].birth;
}

/* Range of the finite values of the selected dimensions, the threshold
 * included when a pair is drawn there. */
static bool finite_range(const plot_spec *s, double *lo, double *hi, bool *any_inf,
                         bool *any_cut, uint64_t *n_total)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    *any_inf = false;
    *any_cut = false;
    *n_total = 0;
    for (uint32_t k = 0; k < s->n_series; k++) {
        const plot_series *se = &s->series[k];
        *n_total += se->n;
        for (uint64_t i = 0; i < se->n; i++) {
            *lo = fmin(*lo, se->pairs[i].birth);
            *hi = fmax(*hi, se->pairs[i].birth);
            if (cut_at_threshold(s, se, i)) {
                *any_cut = true;
                *hi = fmax(*hi, s->threshold);
            } else if (isinf(se->pairs[i].death)) {
                *any_inf = true;
            } else {
                *hi = fmax(*hi, se->pairs[i].death);
            }
        }
    }
    if (*lo > *hi) {
        *lo = 0.0;
        *hi = 1.0;
        return false;
    }
    return true;
}

/* "H" with the dimension as a subscript. */
static void put_h(FILE *f, uint32_t dim)
{
    fprintf(f, "H<tspan font-size=\"75%%\" dy=\"0.35em\">%u</tspan>", dim);
}

static void header(FILE *f, double w, double h)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" " FONT " font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
}

static void title(FILE *f, const plot_spec *s, double x, double y)
{
    if (s->title == NULL || *s->title == '\0')
        return;
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"15\">", x, y);
    put_escaped(f, s->title);
    fputs("</text>\n", f);
}

/* A bar as drawn: a cut-off one ends at the threshold. */
typedef struct bar {
    double birth, end;
    bool cut;
} bar;

static bar bar_of(const plot_spec *s, const plot_series *se, uint64_t i)
{
    bool cut = cut_at_threshold(s, se, i);
    return (bar){se->pairs[i].birth, cut ? s->threshold : se->pairs[i].death, cut};
}

/* Bars and points are drawn in this order, whatever the order of the
 * pairs given: the same diagram makes the same bytes, from any backend or
 * file (a committed picture is compared with a fresh one byte for byte).
 * The order is total on what is drawn: birth, end, then a cut-off one after
 * one that ends at the same value. */
static int cmp_bar(const void *pa, const void *pb)
{
    const bar *a = pa, *b = pb;
    if (a->birth != b->birth)
        return a->birth < b->birth ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return (int)a->cut - (int)b->cut;
}

/* The pairs of se as drawn, sorted by cmp_bar; NULL when se is empty or
 * memory ran out (the caller then draws them in the given order). */
static bar *sorted_bars(const plot_spec *s, const plot_series *se)
{
    bar *sorted = se->n ? malloc(se->n * sizeof(*sorted)) : NULL;
    if (sorted != NULL) {
        for (uint64_t i = 0; i < se->n; i++)
            sorted[i] = bar_of(s, se, i);
        qsort(sorted, se->n, sizeof(*sorted), cmp_bar);
    }
    return sorted;
}

/* ------------------------------------------------------------------------
 * Persistence diagram
 * ---------------------------------------------------------------------- */

static void draw_diagram(FILE *f, const plot_spec *s)
{
    const bool has_title = s->title != NULL && *s->title != '\0';
    const double W = s->width > 0 ? s->width : 440, H = s->height > 0 ? s->height : 440;
    const double left = 62, right = 18, top = has_title ? 40 : 16, bottom = 50;
    const double side = fmin(W - left - right, H - top - bottom);

    double lo, hi;
    bool any_inf, any_cut;
    uint64_t n_total;
    finite_range(s, &lo, &hi, &any_inf, &any_cut, &n_total);
    const frame fr = frame_for(lo, hi);
    lo = to_frame(&fr, lo);
    hi = to_frame(&fr, hi);
    /* Rips filtrations start at 0; keeping 0 on the axes makes diagrams of
     * different data comparable at a glance. */
    if (lo > 0 && lo < 0.5 * hi)
        lo = 0;
    axis a = nice_axis(lo, hi, 5, &fr);
    /* Infinite deaths sit on a line a little above the last tick. */
    const double span = a.hi - a.lo;
    const double inf_level = a.hi + 0.09 * span;
    const double vmax = any_inf ? a.hi + 0.14 * span : a.hi;
    /* A little room below the first tick keeps points born at it off the
     * axis line. */
    const double origin = a.lo - 0.035 * (vmax - a.lo);
    const double x0 = left, y0 = top + side; /* pixel of (origin, origin) */
    const double scale = side / (vmax - origin);
    /* SX, SY take frame units; data values go through to_frame first. */
#define SX(v) (x0 + ((v)-origin) * scale)
#define SY(v) (y0 - ((v)-origin) * scale)

    header(f, W, H);
    title(f, s, left + side / 2, 24);

    /* Below the diagonal nothing can lie; shade it as GUDHI does. */
    fprintf(f, "<polygon points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f\" fill=\"#eeeeee\"/>\n", SX(origin),
            SY(origin), SX(vmax), SY(vmax), SX(vmax), SY(origin));
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\" "
            "stroke-width=\"1\"/>\n",
            SX(origin), SY(origin), SX(vmax), SY(vmax));
    if (any_inf) {
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\" "
                "stroke-width=\"1\" stroke-dasharray=\"5,3\"/>\n",
                SX(origin), SY(inf_level), SX(vmax), SY(inf_level));
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" dominant-baseline=\"central\" "
                "font-size=\"15\">+&#8734;</text>\n",
                x0 - 8, SY(inf_level));
    }
    char thr[48];
    if (any_cut) {
        const double ty = SY(to_frame(&fr, s->threshold));
        tick_label(thr, sizeof thr, &(axis){.e = fr.e, .decimals = -1, .step = 0},
                   to_frame(&fr, s->threshold));
        fprintf(f,
                "<line class=\"threshold\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"#777777\" stroke-width=\"1\" stroke-dasharray=\"2,3\"/>\n",
                SX(origin), ty, SX(vmax), ty);
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#555555\" "
                "font-size=\"11\">threshold %s (cut off: open markers)</text>\n",
                SX(vmax) - 4, ty - 5, thr);
    }

    /* Axes, ticks, labels. */
    fprintf(f,
            "<g stroke=\"black\" stroke-width=\"1\" fill=\"none\">\n"
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
            x0, y0, x0 + side, y0, x0, y0, x0, y0 - side);
    for (int i = 0; i < a.n_ticks; i++) {
        const double t = tick_at(&a, i);
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                SX(t), y0, SX(t), y0 + 5, x0 - 5, SY(t), x0, SY(t));
    }
    fputs("</g>\n", f);
    char lab[48];
    fputs("<g font-size=\"11\">\n", f);
    for (int i = 0; i < a.n_ticks; i++) {
        const double t = tick_at(&a, i);
        tick_label(lab, sizeof lab, &a, t);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>", SX(t), y0 + 18,
                lab);
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" "
                "dominant-baseline=\"central\">%s</text>\n",
                x0 - 8, SY(t), lab);
    }
    fputs("</g>\n", f);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"13\">Birth</text>\n",
            x0 + side / 2, y0 + 40);
    fprintf(f,
            "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"13\">Death</text>\n",
            x0 - 46, y0 - side / 2);

    /* Points, one group per dimension, each in cmp_bar's order. */
    const double r = n_total > 2000 ? 2.0 : n_total > 300 ? 2.8 : 3.6;
    for (uint32_t k = 0; k < s->n_series; k++) {
        const plot_series *se = &s->series[k];
        bar *sorted = sorted_bars(s, se);
        fprintf(f, "<g fill=\"%s\" fill-opacity=\"0.8\" stroke=\"white\" stroke-width=\"0.6\">\n",
                colour(se->dim));
        for (uint64_t i = 0; i < se->n; i++) {
            const bar p = sorted != NULL ? sorted[i] : bar_of(s, se, i);
            const double b = to_frame(&fr, p.birth);
            if (p.cut) {
                /* Open: alive at the threshold, not dead there. */
                fprintf(f,
                        "<circle class=\"cut\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" "
                        "fill=\"white\" stroke=\"%s\" stroke-width=\"1.4\"/>\n",
                        SX(b), SY(to_frame(&fr, s->threshold)), r, colour(se->dim));
                continue;
            }
            const double y = isinf(p.end) ? inf_level : to_frame(&fr, p.end);
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\"/>\n", SX(b), SY(y), r);
        }
        fputs("</g>\n", f);
        free(sorted);
    }

    if (n_total == 0)
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" fill=\"#777777\">"
                "no intervals</text>\n",
                x0 + side / 2, y0 - side / 2);

    /* Legend in the lower right, in the empty half below the diagonal. */
    const double row = 18, lw = 96, lh = 10 + row * s->n_series;
    const double lx = x0 + side - lw - 8, ly = y0 - lh - 8;
    if (s->n_series > 0) {
        fprintf(f,
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"white\" "
                "stroke=\"#bbbbbb\" stroke-width=\"0.8\"/>\n",
                lx, ly, lw, lh);
        for (uint32_t k = 0; k < s->n_series; k++) {
            double cy = ly + 5 + row * (k + 0.5);
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>", lx + 14, cy,
                    colour(s->series[k].dim));
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" dominant-baseline=\"central\">", lx + 26,
                    cy - 2);
            put_h(f, s->series[k].dim);
            fprintf(f,
                    "</text><text x=\"%.2f\" y=\"%.2f\" dominant-baseline=\"central\" "
                    "fill=\"#555555\" font-size=\"11\">(%llu)</text>\n",
                    lx + 50, cy, (unsigned long long)s->series[k].n);
        }
    }
    fputs("</svg>\n", f);
#undef SX
#undef SY
}

/* ------------------------------------------------------------------------
 * Barcode
 * ---------------------------------------------------------------------- */

static void draw_barcode(FILE *f, const plot_spec *s)
{
    const bool has_title = s->title != NULL && *s->title != '\0';
    double lo, hi;
    bool any_inf, any_cut;
    uint64_t n_total;
    finite_range(s, &lo, &hi, &any_inf, &any_cut, &n_total);
    const frame fr = frame_for(lo, hi);
    lo = to_frame(&fr, lo);
    hi = to_frame(&fr, hi);
    if (lo > 0 && lo < 0.5 * hi)
        lo = 0;
    axis a = nice_axis(lo, hi, 6, &fr);

    const double W = s->width > 0 ? s->width : 640;
    const double left = 52, right = 34, top = (has_title ? 40 : 14) + 22, bottom = 48;
    const double group_gap = 12;
    const double gaps = s->n_series > 1 ? group_gap * (s->n_series - 1) : 0;
    double pitch;
    double H;
    if (s->height > 0) {
        H = s->height;
        pitch = n_total > 0 ? (H - top - bottom - gaps) / (double)n_total : 10;
    } else {
        pitch = n_total == 0 ? 10 : fmax(1.0, fmin(10.0, 640.0 / (double)n_total));
        H = top + bottom + gaps + pitch * (double)(n_total > 0 ? n_total : 1) + 8;
    }
    if (pitch < 0.2)
        pitch = 0.2;
    const double thick = fmax(0.6, pitch * 0.7);
    const double plot_w = W - left - right;
    const double span = a.hi - a.lo;
    /* Infinite bars end at inf_at, marked there under the axis: 7% of the
     * span past the last tick, and at least INF_GAP pixels, so that the mark
     * and the last tick's label do not run into each other in a narrow plot.
     * The axis goes on 3% of the span past it. In pixels the gap is
     * fi * plot_w / (1 + fi + 0.03), hence the bound on fi. */
    const double INF_GAP = 26;
    const double fi = plot_w > 2 * INF_GAP ? fmax(0.07, INF_GAP * 1.03 / (plot_w - INF_GAP)) : 0.07;
    const double inf_at = a.hi + fi * span;
    const double vmax = a.hi + (fi + 0.03) * span;
    const double x0 = left, y_axis = H - bottom;
    const double scale = plot_w / (vmax - a.lo);
#define SX(v) (x0 + ((v)-a.lo) * scale)

    header(f, W, H);
    title(f, s, left + plot_w / 2, 24);

    /* Light vertical grid lines help read values off long bars. */
    fputs("<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n", f);
    for (int i = 0; i < a.n_ticks; i++)
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                SX(tick_at(&a, i)), top - 4, SX(tick_at(&a, i)), y_axis);
    fputs("</g>\n", f);
    if (any_inf) {
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#777777\" "
                "stroke-dasharray=\"5,3\"/>\n",
                SX(inf_at), top - 4, SX(inf_at), y_axis);
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"15\">"
                "+&#8734;</text>\n",
                SX(inf_at), y_axis + 19);
    }
    if (any_cut) {
        char thr[48];
        const double tx = SX(to_frame(&fr, s->threshold));
        tick_label(thr, sizeof thr, &(axis){.e = fr.e, .decimals = -1, .step = 0},
                   to_frame(&fr, s->threshold));
        fprintf(f,
                "<line class=\"threshold\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                "stroke=\"#777777\" stroke-dasharray=\"2,3\"/>\n",
                tx, top - 4, tx, y_axis);
        fprintf(f,
                "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" fill=\"#555555\" "
                "font-size=\"11\">threshold %s</text>\n",
                tx - 4, y_axis - 4, thr);
    }

    /* Bars, dimension by dimension, each sorted by birth then death. */
    double y = top;
    for (uint32_t k = 0; k < s->n_series; k++) {
        const plot_series *se = &s->series[k];
        bar *sorted = sorted_bars(s, se);
        double y_start = y;
        fprintf(f, "<g stroke=\"%s\" stroke-width=\"%.2f\">\n", colour(se->dim), thick);
        for (uint64_t i = 0; i < se->n; i++) {
            bar p = sorted != NULL ? sorted[i] : bar_of(s, se, i);
            double yc = y + pitch * (i + 0.5);
            const double xb = SX(to_frame(&fr, p.birth));
            double xe = isinf(p.end) ? SX(inf_at) : SX(to_frame(&fr, p.end));
            /* A bar shorter than a pixel is still drawn, as a pixel. */
            if (xe - xb < 1.0)
                xe = xb + 1.0;
            fprintf(f, "<line%s x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                    p.cut ? " class=\"cut\"" : "", xb, yc, xe, yc);
        }
        fputs("</g>\n", f);
        free(sorted);
        y += pitch * (double)se->n;
        /* The dimension's name at the left, centred on its bars. */
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" dominant-baseline=\"central\" "
                "fill=\"%s\" font-size=\"13\">",
                x0 - 10, (y_start + y) / 2 - 2, colour(se->dim));
        put_h(f, se->dim);
        fputs("</text>\n", f);
        if (k + 1 < s->n_series) {
            y += group_gap;
            fprintf(f,
                    "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#cccccc\" "
                    "stroke-width=\"0.8\"/>\n",
                    x0, y - group_gap / 2, x0 + plot_w, y - group_gap / 2);
        }
    }

    if (n_total == 0)
        fprintf(f,
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" fill=\"#777777\">"
                "no intervals</text>\n",
                x0 + plot_w / 2, (top + y_axis) / 2);

    /* The filtration axis. */
    fprintf(f,
            "<g stroke=\"black\" stroke-width=\"1\">\n"
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
            x0, y_axis, x0 + plot_w, y_axis);
    for (int i = 0; i < a.n_ticks; i++)
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                SX(tick_at(&a, i)), y_axis, SX(tick_at(&a, i)), y_axis + 5);
    fputs("</g>\n<g font-size=\"11\">\n", f);
    char lab[48];
    for (int i = 0; i < a.n_ticks; i++) {
        const double t = tick_at(&a, i);
        tick_label(lab, sizeof lab, &a, t);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n", SX(t),
                y_axis + 18, lab);
    }
    fputs("</g>\n", f);
    fprintf(f,
            "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"13\">"
            "Filtration value</text>\n",
            x0 + plot_w / 2, y_axis + 40);

    /* Legend: one row above the bars, right-aligned. */
    const double entry = 78;
    double lx = x0 + plot_w - entry * s->n_series, ly = top - 14;
    for (uint32_t k = 0; k < s->n_series; k++, lx += entry) {
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                "stroke-width=\"4\"/>",
                lx, ly, lx + 16, ly, colour(s->series[k].dim));
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" dominant-baseline=\"central\">", lx + 21, ly - 2);
        put_h(f, s->series[k].dim);
        fprintf(f,
                "</text><text x=\"%.2f\" y=\"%.2f\" dominant-baseline=\"central\" "
                "fill=\"#555555\" font-size=\"11\">(%llu)</text>\n",
                lx + 42, ly, (unsigned long long)s->series[k].n);
    }
    fputs("</svg>\n", f);
#undef SX
}

int plot_svg_write(FILE *f, const plot_spec *spec)
{
    if (spec->kind == PLOT_BARCODE)
        draw_barcode(f, spec);
    else
        draw_diagram(f, spec);
    return ferror(f) ? -1 : 0;
}
