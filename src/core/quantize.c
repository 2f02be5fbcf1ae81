/* quantize.c -- upstream's quantization entry points over the converters of
 * quant/: argument checks with a message instead of upstream's asserts, and
 * the choice of the path upstream's ggml_quantize_chunk takes per type
 * (without an importance matrix its reference row quantizer, except IQ4_NL
 * and IQ4_XS, whose chunk path searches the scale; with one the weighted
 * searches of Q4_0 .. Q5_1, Q2_K .. Q6_K, IQ4_NL and IQ4_XS). */
#include "core/internal.h"

#include <math.h>

/* No type implemented here needs tables built first (upstream's init builds
 * the IQ1/IQ2/IQ3 grids). */
void ggml_quantize_init(enum ggml_type type) { (void) type; }
void ggml_quantize_free(void) {}

bool ggml_quantize_requires_imatrix(enum ggml_type type) {
    return type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ1_S;
}

/* the types upstream's ggml_quantize_chunk accepts, of those implemented here */
static bool chunk_type_ok(enum ggml_type type) {
    const struct ggml_type_traits * tt = ggml_get_type_traits(type);
    return type == GGML_TYPE_F32 || (tt && tt->from_float_ref && type != GGML_TYPE_Q8_1 && type != GGML_TYPE_Q8_K);
}

size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst, int64_t start, int64_t nrows,
                           int64_t n_per_row, const float * imatrix) {
    const char * fn = "ggml_quantize_chunk";
    if (!chunk_type_ok(type)) {
        ggmlr_set_error("%s: cannot quantize to type %d (%s)", fn, (int) type, ggml_type_name(type));
        return 0;
    }
    if (!src || !dst) { ggmlr_set_error("%s: %s is NULL", fn, src ? "dst" : "src"); return 0; }
    const int64_t blck = ggml_blck_size(type);
    if (nrows < 0 || n_per_row <= 0 || n_per_row % blck != 0 || start < 0 || start % n_per_row != 0) {
        ggmlr_set_error("%s: %s needs n_per_row > 0 a multiple of %lld, nrows >= 0 and start >= 0 a multiple of "
                        "n_per_row (got n_per_row %lld, nrows %lld, start %lld)", fn, ggml_type_name(type), (long long) blck,
                        (long long) n_per_row, (long long) nrows, (long long) start);
        return 0;
    }
    if (nrows > INT64_MAX / n_per_row) { ggmlr_set_error("%s: nrows * n_per_row overflows", fn); return 0; }
    const size_t row_size = ggml_row_size(type, n_per_row);
    char * out = (char *) dst + (size_t) (start / n_per_row) * row_size;
    const float * in = src + start;
    const int64_t n = nrows * n_per_row;
    /* an importance matrix: used where upstream uses one, ignored by F16,
     * BF16, Q8_0, MXFP4, NVFP4, Q1_0, Q2_0, TQ1_0 and TQ2_0 (as upstream:
     * their rows are the reference quantizer's either way) */
    switch (type) {
        case GGML_TYPE_F32:    memcpy(out, in, (size_t) n * sizeof(float)); break;
        case GGML_TYPE_IQ4_NL: ggmlr_quantize_rows_iq4_nl(in, out, nrows, n_per_row, imatrix); break;
        case GGML_TYPE_IQ4_XS: ggmlr_quantize_rows_iq4_xs(in, out, nrows, n_per_row, imatrix); break;
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1:
            if (imatrix) ggmlr_quantize_rows_legacy(type, in, out, nrows, n_per_row, imatrix);
            else ggml_get_type_traits(type)->from_float_ref(in, out, n);
            break;
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
            if (imatrix) ggmlr_quantize_rows_k(type, in, out, nrows, n_per_row, imatrix);
            else ggml_get_type_traits(type)->from_float_ref(in, out, n);
            break;
        default:               ggml_get_type_traits(type)->from_float_ref(in, out, n); break;
    }
    return (size_t) nrows * row_size;
}

/* Whether nbytes of type hold whole rows of finite values (upstream checks
 * float types and the scales of blocks): float types element by element, a
 * block type through its dequantizer (a NaN or infinite scale shows as a
 * non-finite value); integer types are always valid. A type with neither
 * (IQ1/IQ2/IQ3: named only here) is checked for its size only. */
bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes) {
    const char * fn = "ggml_validate_row_data";
    const size_t tsize = ggml_type_size(type);
    if (tsize == 0) { ggmlr_set_error("%s: invalid type %d", fn, (int) type); return false; }  /* out of range, or removed upstream */
    if (nbytes % tsize != 0) {
        ggmlr_set_error("%s: %zu bytes are not a whole number of %s blocks (%zu bytes each)", fn, nbytes, ggml_type_name(type), tsize);
        return false;
    }
    if (nbytes > 0 && !data) { ggmlr_set_error("%s: data is NULL", fn); return false; }
    const size_t nblocks = nbytes / tsize;
    const int64_t blck = ggml_blck_size(type);
    if (type == GGML_TYPE_F64) {
        for (size_t i = 0; i < nblocks; i++) {
            double v;
            memcpy(&v, (const char *) data + i * 8, 8);
            if (!isfinite(v)) { ggmlr_set_error("%s: value %zu is %g", fn, i, v); return false; }
        }
        return true;
    }
    const struct ggml_type_traits * tt = ggml_get_type_traits(type);
    const bool floats = type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
    if (!floats && !(tt && tt->to_float)) return true;
    float buf[256];
    const size_t per = blck > 256 ? 1 : (size_t) (256 / blck);  /* blocks per chunk of at most 256 values */
    for (size_t b0 = 0; b0 < nblocks; b0 += per) {
        const size_t nb = nblocks - b0 < per ? nblocks - b0 : per;
        const void * src = (const char *) data + b0 * tsize;
        if (type == GGML_TYPE_F32) memcpy(buf, src, nb * 4);
        else tt->to_float(src, buf, (int64_t) nb * blck);
        for (size_t i = 0; i < nb * (size_t) blck; i++) {
            if (!isfinite(buf[i])) {
                ggmlr_set_error("%s: %s value %zu is not finite", fn, ggml_type_name(type), b0 * (size_t) blck + i);
                return false;
            }
        }
    }
    return true;
}
