/* search.c -- the scale searches of the K types and of the importance-matrix
 * paths of the legacy types (upstream's make_qx_quants, make_q3_quants,
 * make_qkx2/3_quants), shared by k_quants.c and legacy.c. */
#include "quant/search.h"

#include <math.h>
#include <string.h>

/* Symmetric quants q in [-nmax, nmax) for x ~ scale*q, L = q + nmax. The
 * start is 1/iscale with iscale = -nmax/max (max: the signed absmax); then
 * 18 more iscales -(nmax + 0.1*is)/max are tried and the one with the best
 * weighted least-squares fit kept (upstream's rmse_type 1: weights qw, or
 * x^2 without them). */
float ggmlr_make_qx_quants(int n, int nmax, const float * x, int8_t * L, const float * qw) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); max = x[i]; }
    }
    if (amax < GROUP_MAX_EPS) { memset(L, 0, (size_t) n); return 0.0f; }
    float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = clampi(ggmlr_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) (l + nmax);
        const float w = qw ? qw[i] : x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; i++) {
            const int l = clampi(ggmlr_nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = qw ? qw[i] : x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++) L[i] = (int8_t) (nmax + clampi(ggmlr_nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* Q3_K's: symmetric, then up to 5 rounds of coordinate descent, each quant
 * moved to the level that improves the fit sumlx^2/suml2 (weights x^2). */
float ggmlr_make_q3_quants(int n, int nmax, const float * x, int8_t * L, const float * unused) {
    (void) unused;
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); max = x[i]; }
    }
    if (amax < GROUP_MAX_EPS) { memset(L, 0, (size_t) n); return 0.0f; }
    const float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = clampi(ggmlr_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) l;
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (!(slx > 0)) continue;   /* (a NaN skips too) */
            float sl2 = suml2 - w * L[i] * L[i];
            const int new_l = clampi(ggmlr_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (new_l == L[i]) continue;
            slx += w * x[i] * new_l;
            sl2 += w * new_l * new_l;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t) new_l;
                sumlx = slx;
                suml2 = sl2;
                n_changed++;
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t) (L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Affine quants L in [0, nmax] for x ~ scale*L - the_min (min <= 0 kept in
 * the block): start from (max - min)/nmax, then nstep+1 iscales
 * (rmin + rdelta*is + nmax)/(max - min), each followed by the weighted
 * least-squares scale and min of its L (min clamped to <= 0); the candidate
 * with the least weighted error (|.| with use_mad, else squared) wins.
 * weights NULL: x^2 (upstream's make_qkx3_quants; with weights it is also
 * upstream's make_qkx2_quants, the two differ only there). */
#define W(i) (weights ? weights[i] : x[i] * x[i])
float ggmlr_make_qkx_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                            uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = W(0), sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += W(i);
        sum_x += W(i) * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        memset(L, 0, (size_t) n);
        *the_min = -min;
        return 0.0f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t) clampi(ggmlr_nearest_int(iscale * (x[i] - min)), 0, nmax);
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += W(i) * diff;
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            const int l = clampi(ggmlr_nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t) l;
            const float w = W(i);
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (!(D > 0)) continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float cur_error = 0;
        for (int i = 0; i < n; i++) {
            float diff = this_scale * Laux[i] + this_min - x[i];
            diff = use_mad ? fabsf(diff) : diff * diff;
            cur_error += W(i) * diff;
        }
        if (cur_error < best_error) {
            memcpy(L, Laux, (size_t) n);
            best_error = cur_error;
            scale = this_scale;
            min = this_min;
        }
    }
    *the_min = -min;
    return scale;
}
#undef W

/* Non-negative values (the K types' sub-block scales or mins) onto levels
 * 0..nmax with weights qw (upstream's make_qp_quants): the start nmax/max and
 * 8 nearby iscales (nmax + 0.1*is)/max scored by weighted squared error, then
 * up to 5 rounds of coordinate descent on the least-squares fit. */
float ggmlr_make_qp_quants(int n, int nmax, const float * x, uint8_t * L, const float * qw) {
    float max = 0;
    for (int i = 0; i < n; i++) max = max > x[i] ? max : x[i];
    if (max < GROUP_MAX_EPS) { memset(L, 0, (size_t) n); return 0.0f; }
    float iscale = nmax / max;
    for (int i = 0; i < n; i++) L[i] = (uint8_t) ggmlr_nearest_int(iscale * x[i]);
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; i++) {
        const float diff = x[i] - scale * L[i];
        best_mse += qw[i] * diff * diff;
    }
    for (int is = -4; is <= 4; is++) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * is + nmax) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; i++) {
            const int l = imin_(nmax, ggmlr_nearest_int(iscale_is * x[i]));
            const float diff = x[i] - scale_is * l;
            mse += qw[i] * diff * diff;
        }
        if (mse < best_mse) { best_mse = mse; iscale = iscale_is; }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = imin_(nmax, ggmlr_nearest_int(iscale * x[i]));
        L[i] = (uint8_t) l;
        sumlx += qw[i] * x[i] * l;
        suml2 += qw[i] * l * l;
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = qw[i];
            float slx = sumlx - w * x[i] * L[i];
            float sl2 = suml2 - w * L[i] * L[i];
            if (!(slx > 0 && sl2 > 0)) continue;
            const int new_l = imin_(nmax, ggmlr_nearest_int(x[i] * sl2 / slx));
            if (new_l == L[i]) continue;
            slx += w * x[i] * new_l;
            sl2 += w * new_l * new_l;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (uint8_t) new_l;
                sumlx = slx;
                suml2 = sl2;
                n_changed++;
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}
