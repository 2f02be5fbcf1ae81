/* attn_ref.h -- float64 reference of the fused attention (docs/attention.md) and
 * the input builders shared by tests/test_flash_attn_*.c.
 *
 * Host arrays are dense doubles in ggml order (ne0 fastest):
 *   q [DK,N,H,B]  k [DK,M,Hkv,B]  v [DV,M,Hkv,B]  mask [M,mN,mh,mb]
 *   out and d [DV,H,N,B]   (H before N)
 * The reference is written with plain loops, independently of the kernels. */
#ifndef GGMLR_ATTN_REF_H
#define GGMLR_ATTN_REF_H

#include "test_common.h"

typedef struct {
    int64_t DK, DV, N, M, H, Hkv, B;
} attn_dims;

/* One attention problem in float64. mask may be NULL (then mne is unused). */
typedef struct {
    attn_dims a;
    double * q, * k, * v;
    double * mask;      /* [M, mne[1], mne[2], mne[3]] or NULL */
    int64_t  mne[4];
    double   scale, max_bias, softcap;
    double * sinks;     /* NULL or [H]: a logit per query head in each row's softmax denominator only */
} attn_problem;

static inline int64_t attn_nq(const attn_dims * a)   { return a->DK * a->N * a->H * a->B; }
static inline int64_t attn_nk(const attn_dims * a)   { return a->DK * a->M * a->Hkv * a->B; }
static inline int64_t attn_nv(const attn_dims * a)   { return a->DV * a->M * a->Hkv * a->B; }
static inline int64_t attn_nout(const attn_dims * a) { return a->DV * a->H * a->N * a->B; }
/* pad(n) = ceil(n*4/16)*16/4 of docs/attention.md, written in bytes as there
 * (independently of the library's ggmlr_pad16_floats). */
int64_t attn_pad(int64_t n);

/* Upstream ggml's ALiBi slope of query head h with n_head = H heads (1 when max_bias <= 0). */
double attn_alibi_slope(double max_bias, int64_t h, int64_t n_head);

/* Softmax probabilities of query row (n, h, b) into pr[M] (with a sink: its e^(sink - max) in the
 * denominator too); returns false (pr all 0) when every score is -Inf. */
bool attn_ref_probs(const attn_problem * p, int64_t n, int64_t h, int64_t b, double * pr);
/* out [DV,H,N,B] */
void attn_ref_forward(const attn_problem * p, double * out);
/* Gradients of sum(d * out) (d [DV,H,N,B]) by the analytic formulas; softcap must be 0. */
void attn_ref_backward(const attn_problem * p, const double * d, double * dq, double * dk, double * dv);
/* Gradient of sum(d * out) w.r.t. the sinks [H]: the sink's probability in a row is 1 - sum_m p_m
 * and dout/dsink = -p_sink out, so ds[h] = -sum over head h's rows of p_sink (d . out). */
void attn_ref_dsinks(const attn_problem * p, const double * d, double * ds);
/* sum(d * out) */
double attn_ref_loss(const attn_problem * p, const double * d);
/* Central differences of sum(d * out) w.r.t. q (which = 0), k (1), v (2) or the sinks (3), in float64. */
void attn_ref_numgrad(attn_problem * p, const double * d, int which, double eps, double * g);

/* ---- building the same problem as ggml tensors ---- */

enum attn_mask_flags {
    AM_NONE    = 0,
    AM_ZERO    = 1,   /* a mask of zeros (present, no effect unless ALiBi) */
    AM_VALUES  = 2,   /* finite random values in [-2, 2] */
    AM_CAUSAL  = 4,   /* key m hidden (-Inf) from query n when m > n */
    AM_RANDINF = 8,   /* about 30% random -Inf entries */
    AM_FULLROW = 16,  /* rows n % 3 == 0 of plane (0, 0) entirely -Inf */
    AM_TOPROWS = 32,  /* rows n < 30 of plane (0, 0) entirely -Inf (whole blocks of queries) */
    AM_KEYSPAN = 64,  /* keys 64 <= m < 140 hidden from every query (whole tiles of keys) */
};

/* ggml_flash_attn_ext_add_sinks: none; per head h, by h % 4: uniform in [-2, 2], 10 (past every score:
 * the sink dominates the row), uniform, -Inf (adds nothing); or 10 + h / 2 on every head */
enum attn_sinks { AS_NONE = 0, AS_MIXED = 1, AS_DOMINANT = 2 };

enum attn_layout {
    AL_CONTIGUOUS = 0,
    AL_PERMUTED   = 1,  /* q, k, v are permuted views (strided rows); mask rows padded */
    AL_TRANSPOSED = 2,  /* q, k, v are transposed views (strided elements); mask rows padded */
};

typedef struct {
    int64_t DK, DV, N, M, H, Hkv, B;
    int mask;                   /* attn_mask_flags; AM_NONE = no mask tensor */
    enum ggml_type mask_type;   /* F16 or F32 */
    int64_t mN, mh, mb;         /* mask ne1, ne2, ne3; 0 means N, 1, 1 */
    enum ggml_type kv_type;     /* F32 or F16 */
    int layout;                 /* attn_layout */
    double lo, hi;              /* q, k, v values uniform in [lo, hi] (both 0: [-1, 1]) */
    double quant;               /* > 0: q, k, v rounded to multiples of quant */
    bool pair_keys;             /* key 2j+1 = key 2j + 32 e0, |q[0]| <= 1/16: pairs of near ties */
    float scale, max_bias, softcap;
    int sinks;                  /* attn_sinks */
} attn_case;

typedef struct {
    attn_problem p;             /* the same values as float64 (F16 values already rounded) */
    double * d;                 /* [DV,H,N,B] random weights / output gradient */
    struct ggml_tensor * q, * k, * v, * mask, * d_t;
    struct ggml_tensor * sinks; /* F32 [H] or NULL */
} attn_inputs;

/* Creates and fills q, k, v, mask (if any) and d in ctx (which must hold data),
 * and the matching float64 problem. */
void attn_inputs_make(struct ggml_context * ctx, const attn_case * c, attn_inputs * in);
void attn_inputs_free(attn_inputs * in);
/* Just the mask of case c (flags, type, planes, layout): tensor, host values
 * (malloc'd, NaN in rows past N) and their shape. */
struct ggml_tensor * attn_make_mask(struct ggml_context * ctx, const attn_case * c, double ** host, int64_t mne[4]);

/* Writes host values (logical order) into a tensor of any layout and type. */
void attn_tensor_set(struct ggml_tensor * t, const double * x);
/* Reads a tensor of any layout and type into a malloc'd double array. */
double * attn_tensor_read(const struct ggml_tensor * t);
/* x rounded as a tensor of type `type` stores it (F32 or F16). */
double attn_round(enum ggml_type type, double x);

/* A case with no mask, F32 K/V, contiguous layout, scale 1/sqrt(DK). */
attn_case attn_base_case(int64_t DK, int64_t DV, int64_t N, int64_t M, int64_t H, int64_t Hkv, int64_t B);

/* The named cases shared by the forward and backward tests: odd sizes, N = 1,
 * M = 1, DK != DV, every GQA ratio, each mask form, layouts, saturation, large
 * shapes spanning several query blocks / key tiles / key chunks of the tiled
 * kernels. fwd_only marks ALiBi, softcap and F16 K/V, which have no backward. */
typedef struct {
    const char * what;
    attn_case c;
    bool fwd_only;
} attn_named_case;
/* Fills out (room for max) and returns the count. */
int attn_named_cases(attn_named_case * out, int max);

/* One-line description of a case for failure messages. */
const char * attn_case_str(const attn_case * c);

/* A random case from `rng` (varied shapes, masks, types, layouts) for the forward
 * (allow_fwd_only: ALiBi, softcap, F16 K/V) or for both directions. */
attn_case attn_random_case(bool allow_fwd_only);

/* Compute one graph holding `t` with n threads; false (and a failed check) on error. */
bool attn_compute(struct ggml_context * ctx, struct ggml_tensor * t, int n_threads);

#endif
