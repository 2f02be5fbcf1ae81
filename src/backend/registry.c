/* registry.c -- upstream's backend registry and devices: one registered
 * backend, "CPU", with one device, "CPU", whose backends are CPU backends
 * and whose buffers are CPU buffers. Nothing is loaded dynamically. */
#include "backend/backend_internal.h"

#include "cpu/exec/compute.h"
#include "ggml-cpu.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

struct ggml_backend_reg    { const char * name; };
struct ggml_backend_device { const char * name; };

static struct ggml_backend_reg    cpu_reg    = {"CPU"};
static struct ggml_backend_device cpu_device = {"CPU"};

/* The device's description, as upstream's CPU device gives it: the processor's
 * model name from /proc/cpuinfo (its first "model name" line, the value
 * trimmed), else "CPU". Read once. */
static char cpu_description[256] = "CPU";

static void read_cpu_description(void) {
    FILE * f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char * colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        char * v = colon + 1;
        while (isspace((unsigned char) *v)) v++;
        size_t n = strlen(v);
        while (n > 0 && isspace((unsigned char) v[n - 1])) n--;
        if (n > 0) snprintf(cpu_description, sizeof cpu_description, "%.*s", (int) n, v);
        break;
    }
    fclose(f);
}

static const char * device_description(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_cpu_description);
    return cpu_description;
}

ggml_backend_reg_t ggml_backend_cpu_reg(void) { return &cpu_reg; }

size_t ggml_backend_reg_count(void) { return 1; }
ggml_backend_reg_t ggml_backend_reg_get(size_t index) {
    if (index != 0) { ggmlr_set_error("ggml_backend_reg_get: no backend %zu (there is one)", index); return NULL; }
    return &cpu_reg;
}
ggml_backend_reg_t ggml_backend_reg_by_name(const char * name) { return name && strcasecmp(name, cpu_reg.name) == 0 ? &cpu_reg : NULL; }

const char * ggml_backend_reg_name(ggml_backend_reg_t reg) { return reg ? reg->name : NULL; }
size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg) { return reg ? 1 : 0; }
ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index) {
    if (!reg || index != 0) { ggmlr_set_error("ggml_backend_reg_dev_get: no device %zu", index); return NULL; }
    return &cpu_device;
}

/* The features ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features")
 * lists: the instruction sets this CPU has, and the SIMD path of the kernels;
 * a NULL-terminated array, per thread (valid while the thread lives). */

static struct ggml_backend_feature * cpu_features(ggml_backend_reg_t reg) {
    (void) reg;
    static _Thread_local struct ggml_backend_feature features[16];
    static const struct { const char * name; int (*has)(void); } known[] = {
        {"SSE3", ggml_cpu_has_sse3}, {"SSSE3", ggml_cpu_has_ssse3}, {"AVX", ggml_cpu_has_avx}, {"AVX2", ggml_cpu_has_avx2},
        {"F16C", ggml_cpu_has_f16c}, {"FMA", ggml_cpu_has_fma}, {"BMI2", ggml_cpu_has_bmi2}, {"AVX512", ggml_cpu_has_avx512},
        {"AVX512_VBMI", ggml_cpu_has_avx512_vbmi}, {"AVX512_VNNI", ggml_cpu_has_avx512_vnni}, {"AVX512_BF16", ggml_cpu_has_avx512_bf16},
        {"AVX_VNNI", ggml_cpu_has_avx_vnni}, {"AMX_INT8", ggml_cpu_has_amx_int8},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) if (known[i].has()) features[n++] = (struct ggml_backend_feature) {known[i].name, "1"};
    features[n++] = (struct ggml_backend_feature) {"SIMD", ggml_cpu_simd_name()};  /* the kernels' path (GGMLR_SIMD) */
    features[n] = (struct ggml_backend_feature) {NULL, NULL};
    return features;
}

void * ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    /* function pointers handed out as void *, as upstream's API does (POSIX allows the conversion) */
    static ggml_backend_set_n_threads_t const set_n_threads = ggml_backend_cpu_set_n_threads;
    static ggml_backend_get_features_t const get_features = cpu_features;
    void * p = NULL;
    if (!reg || !name) return NULL;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0) memcpy(&p, &set_n_threads, sizeof p);
    if (strcmp(name, "ggml_backend_get_features") == 0) memcpy(&p, &get_features, sizeof p);
    return p;
}

size_t ggml_backend_dev_count(void) { return 1; }
ggml_backend_dev_t ggml_backend_dev_get(size_t index) {
    if (index != 0) { ggmlr_set_error("ggml_backend_dev_get: no device %zu (there is one)", index); return NULL; }
    return &cpu_device;
}
ggml_backend_dev_t ggml_backend_dev_by_name(const char * name) { return name && strcasecmp(name, cpu_device.name) == 0 ? &cpu_device : NULL; }
ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type) { return type == GGML_BACKEND_DEVICE_TYPE_CPU ? &cpu_device : NULL; }

const char * ggml_backend_dev_name(ggml_backend_dev_t device) { return device ? device->name : NULL; }
const char * ggml_backend_dev_description(ggml_backend_dev_t device) { return device ? device_description() : NULL; }
enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device) { (void) device; return GGML_BACKEND_DEVICE_TYPE_CPU; }
ggml_backend_reg_t ggml_backend_dev_backend_reg(ggml_backend_dev_t device) { return device ? &cpu_reg : NULL; }
ggml_backend_buffer_type_t ggml_backend_dev_buffer_type(ggml_backend_dev_t device) { return device ? ggml_backend_cpu_buffer_type() : NULL; }
ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device) { (void) device; return NULL; }
bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op) { return device && ggmlr_cpu_supports_op(op); }
bool ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft) { return device && buft == ggml_backend_cpu_buffer_type(); }
bool ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op) { (void) device; (void) op; return false; }
ggml_backend_dev_t ggml_backend_buft_get_device(ggml_backend_buffer_type_t buft) { return buft == ggml_backend_cpu_buffer_type() ? &cpu_device : NULL; }
ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend) { return backend ? &cpu_device : NULL; }

/* The machine's physical memory; free = what the system counts as available. */
void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total) {
    const long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
#ifdef _SC_AVPHYS_PAGES
    const long avail = sysconf(_SC_AVPHYS_PAGES);
#else
    const long avail = pages;
#endif
    const size_t t = device && page > 0 && pages > 0 ? (size_t) page * (size_t) pages : 0;
    const size_t f = device && page > 0 && avail > 0 ? (size_t) page * (size_t) avail : 0;
    if (total) *total = t;
    if (free) *free = f < t ? f : t;
}

void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props) {
    if (!props) return;
    memset(props, 0, sizeof *props);
    if (!device) return;
    props->name = device->name;
    props->description = device_description();
    props->type = GGML_BACKEND_DEVICE_TYPE_CPU;
    ggml_backend_dev_memory(device, &props->memory_free, &props->memory_total);
    props->caps.buffer_from_host_ptr = true;
    props->caps.events = false;  /* none, as upstream's CPU device */
}

ggml_backend_t ggml_backend_dev_init(ggml_backend_dev_t device, const char * params) {
    (void) params;
    if (!device) { ggmlr_set_error("ggml_backend_dev_init: device is NULL"); return NULL; }
    return ggml_backend_cpu_init();
}

ggml_backend_t ggml_backend_init_by_name(const char * name, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    if (!dev) { ggmlr_set_error("ggml_backend_init_by_name: no device '%s' (there is 'CPU')", name ? name : "(null)"); return NULL; }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(type);
    if (!dev) { ggmlr_set_error("ggml_backend_init_by_type: no device of type %d (there is a CPU one)", (int) type); return NULL; }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_best(void) { return ggml_backend_dev_init(&cpu_device, NULL); }

ggml_backend_reg_t ggml_backend_load(const char * path) {
    ggmlr_set_error("ggml_backend_load: backends are not loaded dynamically (asked for '%s'); the CPU backend is built in", path ? path : "(null)");
    return NULL;
}
void ggml_backend_unload(ggml_backend_reg_t reg) { (void) reg; }
void ggml_backend_load_all(void) {}
void ggml_backend_load_all_from_path(const char * dir_path) { (void) dir_path; }

/* The registry is fixed (one backend, one device, both built in). */
void ggml_backend_register(ggml_backend_reg_t reg) {
    if (reg != &cpu_reg) ggmlr_set_error("ggml_backend_register: only the built-in CPU backend can be registered (and it already is)");
}

void ggml_backend_device_register(ggml_backend_dev_t device) {
    if (device != &cpu_device) ggmlr_set_error("ggml_backend_device_register: only the built-in CPU device can be registered (and it already is)");
}

ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size) {
    (void) max_tensor_size;
    if (device != &cpu_device) { ggmlr_set_error("ggml_backend_dev_buffer_from_host_ptr: device is not the CPU device"); return NULL; }
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

/* Upstream's meta backend (tensor parallelism over several devices). */
const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis) {
    switch (split_axis) {
        case GGML_BACKEND_SPLIT_AXIS_0:        return "0";
        case GGML_BACKEND_SPLIT_AXIS_1:        return "1";
        case GGML_BACKEND_SPLIT_AXIS_2:        return "2";
        case GGML_BACKEND_SPLIT_AXIS_3:        return "3";
        case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
        case GGML_BACKEND_SPLIT_AXIS_PARTIAL:  return "PARTIAL";
        case GGML_BACKEND_SPLIT_AXIS_NONE:     return "NONE";
        case GGML_BACKEND_SPLIT_AXIS_UNKNOWN:  return "UNKNOWN";
    }
    ggmlr_set_error("ggml_backend_meta_split_axis_name: no split axis %d", (int) split_axis);
    return NULL;
}

ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t * devs, size_t n_devs, ggml_backend_meta_get_split_state_t get_split_state,
                                            void * get_split_state_ud) {
    (void) devs;
    (void) get_split_state;
    (void) get_split_state_ud;
    ggmlr_set_error("ggml_backend_meta_device: there is one device (CPU), nothing to split tensors across (asked for %zu devices)", n_devs);
    return NULL;
}
