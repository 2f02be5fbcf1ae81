/*
 * Writes a synthetic stand-in for the MNIST data set in its idx format, so that
 * upstream ggml's examples/mnist (mnist-train, mnist-eval) can be run without
 * downloading anything:
 *
 *   cc -O2 -o synthetic-mnist scripts/synthetic-mnist.c
 *   ./synthetic-mnist OUTDIR [SEED]
 *
 * writes OUTDIR/train-images-idx3-ubyte, train-labels-idx1-ubyte (60,000
 * images) and t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (10,000), the
 * names and counts of the real set. Each image is 28x28 bytes; digit d is
 * drawn as the seven-segment figure of d (segments a..g lit as on a pocket
 * calculator) in a box of random size and place, with a random stroke width,
 * slant and brightness, a segment now and then faint, one or two stray
 * strokes, uniform background noise and a few stray bright pixels. The
 * classes are learnable but not at a glance (0, 8 and 9 differ in one segment
 * only, and the random placement keeps a single pixel from giving the class
 * away), so training shows the loss falling from ln(10) = 2.30.
 *
 * idx format (big-endian 32-bit words): images are magic 0x00000803, count,
 * rows, cols, then count*rows*cols bytes; labels are magic 0x00000801, count,
 * then count bytes. The same SEED gives the same files (default 1).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HW = 28, NTRAIN = 60000, NTEST = 10000 };

/* xorshift64*: a small generator whose output is the same on every platform */
static uint64_t rng_state;

static uint32_t rng_u32(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t) ((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

/* uniform in [lo, hi) */
static double rng_uniform(double lo, double hi) {
    return lo + (hi - lo) * (rng_u32() / 4294967296.0);
}

/* uniform integer in [lo, hi] */
static int rng_int(int lo, int hi) {
    return lo + (int) (rng_u32() % (uint32_t) (hi - lo + 1));
}

/* Segments lit per digit, bit s for segment s of: a (top), b (upper right),
 * c (lower right), d (bottom), e (lower left), f (upper left), g (middle). */
static const unsigned char SEGMENTS[10] = {
    0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F,
};

/* Segment s as a line from (x0, y0) to (x1, y1) in the unit box,
 * x to the right, y downwards. */
static const double SEGMENT_ENDS[7][4] = {
    {0, 0, 1, 0},     /* a */
    {1, 0, 1, 0.5},   /* b */
    {1, 0.5, 1, 1},   /* c */
    {0, 1, 1, 1},     /* d */
    {0, 0.5, 0, 1},   /* e */
    {0, 0, 0, 0.5},   /* f */
    {0, 0.5, 1, 0.5}, /* g */
};

/* Distance from point p to the segment from a to b. */
static double segment_distance(double px, double py, double ax, double ay, double bx, double by) {
    const double dx = bx - ax, dy = by - ay;
    const double len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    const double ex = px - (ax + t * dx), ey = py - (ay + t * dy);
    return sqrt(ex * ex + ey * ey);
}

/* One image of digit d into img[HW*HW], row by row. A pixel's ink is a
 * stroke's strength within half a stroke width of the stroke, fading to 0 over
 * one pixel beyond. The strokes are the lit segments (each one, with
 * probability 1/10, faint: strength 0.2..0.6) and one or two short stray
 * strokes (strength 0.3..0.8) anywhere in the image. */
static void draw_digit(unsigned char img[HW * HW], int d) {
    const double w = rng_uniform(8, 14), h = rng_uniform(14, 21);
    const double x0 = rng_uniform(3, HW - 3 - w), y0 = rng_uniform(3, HW - 3 - h);
    const double slant = rng_uniform(-0.25, 0.25); /* x shift per unit of height */
    const double half_width = rng_uniform(0.5, 1.4);
    const double bright = rng_uniform(150, 255);
    const double noise = rng_uniform(0, 80);

    double ends[9][4], strength[9];
    int nstrokes = 0;
    for (int s = 0; s < 7; s++) {
        if (!(SEGMENTS[d] >> s & 1)) {
            continue;
        }
        for (int k = 0; k < 4; k += 2) {
            const double u = SEGMENT_ENDS[s][k], v = SEGMENT_ENDS[s][k + 1];
            ends[nstrokes][k]     = x0 + u * w + (1 - v) * slant * h;
            ends[nstrokes][k + 1] = y0 + v * h;
        }
        strength[nstrokes++] = rng_int(0, 9) == 0 ? rng_uniform(0.2, 0.6) : 1;
    }
    for (int k = rng_int(1, 2); k > 0; k--) {
        const double sx = rng_uniform(0, HW), sy = rng_uniform(0, HW), angle = rng_uniform(0, 3.14159265);
        const double len = rng_uniform(3, 7);
        ends[nstrokes][0] = sx;
        ends[nstrokes][1] = sy;
        ends[nstrokes][2] = sx + len * cos(angle);
        ends[nstrokes][3] = sy + len * sin(angle);
        strength[nstrokes++] = rng_uniform(0.3, 0.8);
    }
    for (int y = 0; y < HW; y++) {
        for (int x = 0; x < HW; x++) {
            double ink = 0;
            for (int s = 0; s < nstrokes; s++) {
                const double dist = segment_distance(x + 0.5, y + 0.5, ends[s][0], ends[s][1], ends[s][2], ends[s][3]);
                const double a = strength[s] * (dist <= half_width ? 1 : (dist < half_width + 1 ? half_width + 1 - dist : 0));
                ink = a > ink ? a : ink;
            }
            double v = ink * bright + rng_uniform(0, noise);
            img[y * HW + x] = (unsigned char) (v > 255 ? 255 : v);
        }
    }
    /* a few stray bright pixels */
    for (int k = rng_int(0, 4); k > 0; k--) {
        img[rng_int(0, HW * HW - 1)] = (unsigned char) rng_int(128, 255);
    }
}

static int put_be32(FILE * f, uint32_t v) {
    const unsigned char b[4] = {(unsigned char) (v >> 24), (unsigned char) (v >> 16),
                                (unsigned char) (v >> 8), (unsigned char) v};
    return fwrite(b, 1, 4, f) == 4;
}

/* Writes OUTDIR/<prefix>-images-idx3-ubyte and OUTDIR/<prefix>-labels-idx1-ubyte
 * with n images, each of a digit drawn uniformly at random. */
static int write_set(const char * outdir, const char * prefix, int n) {
    char path_images[4096], path_labels[4096];
    snprintf(path_images, sizeof path_images, "%s/%s-images-idx3-ubyte", outdir, prefix);
    snprintf(path_labels, sizeof path_labels, "%s/%s-labels-idx1-ubyte", outdir, prefix);
    FILE * fi = fopen(path_images, "wb");
    FILE * fl = fopen(path_labels, "wb");
    int ok = fi && fl;
    ok = ok && put_be32(fi, 0x00000803) && put_be32(fi, (uint32_t) n) && put_be32(fi, HW) && put_be32(fi, HW);
    ok = ok && put_be32(fl, 0x00000801) && put_be32(fl, (uint32_t) n);
    unsigned char img[HW * HW];
    for (int i = 0; ok && i < n; i++) {
        const unsigned char label = (unsigned char) rng_int(0, 9);
        draw_digit(img, label);
        ok = fwrite(img, 1, sizeof img, fi) == sizeof img && fwrite(&label, 1, 1, fl) == 1;
    }
    if (fi && fclose(fi) != 0) ok = 0;
    if (fl && fclose(fl) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "synthetic-mnist: could not write %s and %s\n", path_images, path_labels);
    }
    return ok;
}

int main(int argc, char ** argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUTDIR [SEED]\n", argv[0]);
        return 2;
    }
    const unsigned long long seed = argc == 3 ? strtoull(argv[2], NULL, 10) : 1;
    rng_state = (seed * 0x9E3779B97F4A7C15ULL) | 1; /* odd, so never 0: xorshift's one fixed point */
    if (!write_set(argv[1], "train", NTRAIN) || !write_set(argv[1], "t10k", NTEST)) {
        return 1;
    }
    printf("synthetic-mnist: wrote %d training and %d test images to %s\n", NTRAIN, NTEST, argv[1]);
    return 0;
}
