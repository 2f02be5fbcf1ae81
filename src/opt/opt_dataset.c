/* opt_dataset.c -- the datasets of ggml-opt.h: a [ne_datapoint, ndata] data
 * tensor (and labels) in host memory, cut into shards; batches are copied
 * out shard by shard in the order of a permutation, which
 * ggml_opt_dataset_shuffle draws from the optimization context's generator
 * (so that a seed fixes the order on every rank). */
#include "opt/opt_internal.h"

#include <inttypes.h>
#include <stdlib.h>

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard) {
    /* as upstream, ndata need not be a multiple of ndata_shard: the last
     * ndata % ndata_shard datapoints are in no shard, so in no batch */
    if (ne_datapoint <= 0 || ne_label < 0 || ndata <= 0 || ndata_shard <= 0 || ndata_shard > ndata) {
        ggmlr_set_error("ggml_opt_dataset_init: need ne_datapoint > 0, ne_label >= 0 and 0 < ndata_shard <= ndata "
                        "(got %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ")",
                        ne_datapoint, ne_label, ndata, ndata_shard);
        return NULL;
    }
    if (!ggmlr_type_is_supported(type_data) || (ne_label > 0 && !ggmlr_type_is_supported(type_label))) {
        ggmlr_set_error("ggml_opt_dataset_init: unsupported data or label type (%d, %d)", (int) type_data, (int) type_label);
        return NULL;
    }
    struct ggml_opt_dataset * ds = ggmlr_calloc(1, sizeof *ds);
    if (!ds) { ggmlr_set_error("ggml_opt_dataset_init: out of memory"); return NULL; }
    ds->ndata = ndata;
    ds->ndata_shard = ndata_shard;
    ds->nshards = ndata / ndata_shard;
    struct ggml_init_params ip = {2 * ggml_tensor_overhead(), NULL, true};
    ds->ctx = ggml_init(ip);
    ds->permutation = ggmlr_malloc((size_t) ds->nshards * sizeof *ds->permutation);
    if (!ds->ctx || !ds->permutation) goto fail;
    ds->data = ggml_new_tensor_2d(ds->ctx, type_data, ne_datapoint, ndata);
    if (!ds->data) goto fail;
    ggml_set_name(ds->data, "dataset data");
    ds->nbs_data = ds->data->nb[1] * (size_t) ndata_shard;
    if (ne_label > 0) {
        ds->labels = ggml_new_tensor_2d(ds->ctx, type_label, ne_label, ndata);
        if (!ds->labels) goto fail;
        ggml_set_name(ds->labels, "dataset labels");
        ds->nbs_labels = ds->labels->nb[1] * (size_t) ndata_shard;
    }
    ds->buf = ggml_backend_alloc_ctx_tensors_from_buft(ds->ctx, ggml_backend_cpu_buffer_type());
    if (!ds->buf) goto fail;
    for (int64_t i = 0; i < ds->nshards; i++) ds->permutation[i] = i;
    return ds;
fail:
    if (!ds->permutation) ggmlr_set_error("ggml_opt_dataset_init: out of memory");
    ggml_opt_dataset_free(ds);
    return NULL;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t ds) {
    if (!ds) return;
    ggml_backend_buffer_free(ds->buf);
    ggml_free(ds->ctx);
    free(ds->permutation);
    free(ds);
}

int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t ds) { return ds ? ds->ndata : 0; }
struct ggml_tensor * ggml_opt_dataset_data(ggml_opt_dataset_t ds) { return ds ? ds->data : NULL; }
struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t ds) { return ds ? ds->labels : NULL; }

enum ggml_status ggml_opt_dataset_get_batch(ggml_opt_dataset_t ds, struct ggml_tensor * data_batch, struct ggml_tensor * labels_batch, int64_t ibatch) {
    static const char * fn = "ggml_opt_dataset_get_batch";
    if (!ds || !data_batch) { ggmlr_set_error("%s: dataset or data_batch is NULL", fn); return GGML_STATUS_FAILED; }
    if ((labels_batch == NULL) != (ds->labels == NULL)) {
        ggmlr_set_error("%s: labels_batch must be given exactly when the dataset has labels", fn);
        return GGML_STATUS_FAILED;
    }
    if (data_batch->type != ds->data->type || (labels_batch && labels_batch->type != ds->labels->type)) {
        ggmlr_set_error("%s: batch types differ from the dataset's (%s, %s)", fn, ggml_type_name(ds->data->type),
                        ds->labels ? ggml_type_name(ds->labels->type) : "no labels");
        return GGML_STATUS_FAILED;
    }
    const size_t nb_batch = ggml_nbytes(data_batch);
    if (nb_batch == 0 || nb_batch % ds->nbs_data != 0) {
        ggmlr_set_error("%s: data_batch '%s' (%zu bytes) is not a whole number of shards of %zu bytes", fn, data_batch->name, nb_batch, ds->nbs_data);
        return GGML_STATUS_FAILED;
    }
    const int64_t shards_per_batch = (int64_t) (nb_batch / ds->nbs_data);
    if (labels_batch && ggml_nbytes(labels_batch) != (size_t) shards_per_batch * ds->nbs_labels) {
        ggmlr_set_error("%s: labels_batch '%s' has %zu bytes, the batch's labels are %zu", fn, labels_batch->name,
                        ggml_nbytes(labels_batch), (size_t) shards_per_batch * ds->nbs_labels);
        return GGML_STATUS_FAILED;
    }
    if (ibatch < 0 || ibatch >= ds->nshards / shards_per_batch) {
        ggmlr_set_error("%s: batch %" PRId64 " is out of range (the dataset has %" PRId64 " of this size)", fn, ibatch, ds->nshards / shards_per_batch);
        return GGML_STATUS_FAILED;
    }
    for (int64_t k = 0; k < shards_per_batch; k++) {
        const int64_t ishard = ds->permutation[ibatch * shards_per_batch + k];
        enum ggml_status st = ggml_backend_tensor_set_checked(data_batch, (const char *) ds->data->data + ishard * ds->nbs_data,
                                                              (size_t) k * ds->nbs_data, ds->nbs_data);
        if (st == GGML_STATUS_SUCCESS && labels_batch) {
            st = ggml_backend_tensor_set_checked(labels_batch, (const char *) ds->labels->data + ishard * ds->nbs_labels,
                                                 (size_t) k * ds->nbs_labels, ds->nbs_labels);
        }
        if (st != GGML_STATUS_SUCCESS) return st;
    }
    return GGML_STATUS_SUCCESS;
}

void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t ds, void * data_batch, size_t nb_data_batch, void * labels_batch, int64_t ibatch) {
    static const char * fn = "ggml_opt_dataset_get_batch_host";
    if (!ds || !data_batch) { ggmlr_set_error("%s: dataset or data_batch is NULL", fn); return; }
    if ((labels_batch == NULL) != (ds->labels == NULL)) {
        ggmlr_set_error("%s: labels_batch must be given exactly when the dataset has labels", fn);
        return;
    }
    if (nb_data_batch == 0 || nb_data_batch % ds->nbs_data != 0) {
        ggmlr_set_error("%s: %zu bytes are not a whole number of shards of %zu bytes", fn, nb_data_batch, ds->nbs_data);
        return;
    }
    const int64_t shards_per_batch = (int64_t) (nb_data_batch / ds->nbs_data);
    if (ibatch < 0 || shards_per_batch > ds->nshards || ibatch >= ds->nshards / shards_per_batch) {
        ggmlr_set_error("%s: batch %" PRId64 " is out of range (the dataset has %" PRId64 " of this size)", fn, ibatch,
                        shards_per_batch > ds->nshards ? 0 : ds->nshards / shards_per_batch);
        return;
    }
    for (int64_t k = 0; k < shards_per_batch; k++) {
        const int64_t ishard = ds->permutation[ibatch * shards_per_batch + k];
        memcpy((char *) data_batch + k * ds->nbs_data, (const char *) ds->data->data + ishard * ds->nbs_data, ds->nbs_data);
        if (labels_batch) {
            memcpy((char *) labels_batch + k * ds->nbs_labels, (const char *) ds->labels->data + ishard * ds->nbs_labels, ds->nbs_labels);
        }
    }
}

/* splitmix64: a small, well-mixed generator whose sequence is the same everywhere */
static uint64_t rng_next(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n) without modulo bias: reject the first 2^64 mod n values */
static uint64_t rng_below(uint64_t * state, uint64_t n) {
    const uint64_t reject_below = (0 - n) % n;
    uint64_t r;
    do r = rng_next(state); while (r < reject_below);
    return r % n;
}

enum ggml_status ggml_opt_dataset_shuffle(ggml_opt_context_t oc, ggml_opt_dataset_t ds, int64_t idata) {
    if (!oc || !ds) { ggmlr_set_error("ggml_opt_dataset_shuffle: context or dataset is NULL"); return GGML_STATUS_FAILED; }
    if (idata > ds->ndata || (idata >= 0 && idata % ds->ndata_shard != 0)) {
        ggmlr_set_error("ggml_opt_dataset_shuffle: idata %" PRId64 " must be <= ndata %" PRId64 " and a multiple of ndata_shard %" PRId64,
                        idata, ds->ndata, ds->ndata_shard);
        return GGML_STATUS_FAILED;
    }
    const int64_t n = idata < 0 ? ds->nshards : idata / ds->ndata_shard;
    for (int64_t i = n - 1; i > 0; i--) {  /* Fisher-Yates */
        const int64_t j = (int64_t) rng_below(&oc->rng, (uint64_t) i + 1);
        const int64_t t = ds->permutation[i];
        ds->permutation[i] = ds->permutation[j];
        ds->permutation[j] = t;
    }
    return GGML_STATUS_SUCCESS;
}
