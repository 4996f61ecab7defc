/*
 * cmd_onnx_test.c — `kiln onnx-test DIR...`: the ONNX backend test layout
 * (DIR/model.onnx, DIR/test_data_set_N/input_K.pb and output_K.pb) run on
 * this runtime. Each data set is imported with its own input values
 * known, so that unnamed sizes take the data's sizes and shape operands
 * fed as graph inputs fold into attributes; then it is sealed, loaded,
 * run and compared: floats (f16 and bf16 by their values) within rtol 1e-3
 * and atol 1e-7 (ONNX's own tolerances; --rtol and --atol change them),
 * bf16 also within one bf16 ulp (NaN equals NaN), everything else exactly.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/onnx.h>

#include "cli.h"
#include "onnx_options.h"
#include "term.h"

static int cmd_onnx_test(int argc, char **argv);

const cli_verb cli_verb_onnx_test = {
    "onnx-test",
    "run ONNX test case directories and compare the outputs",
    "usage: kiln onnx-test DIR... [--dim NAME=MIN..MAX[:K]]... [--rtol R] [--atol A]\n\n"
    "Each DIR holds model.onnx and test_data_set_N/ directories of input_K.pb and\n"
    "output_K.pb tensors. Every data set is imported (sizes that no --dim bounds take\n"
    "the data's sizes), sealed, loaded, run and compared: floats within rtol 1e-3 and\n"
    "atol 1e-7 (bf16 also within one bf16 ulp; NaN equals NaN), other dtypes exactly.\n"
    "Prints one line per case:\n"
    "'pass NAME', 'fail NAME: ...' or 'skip NAME: reason' (the model uses something\n"
    "kiln cannot import), then 'N passed, N failed, N skipped'. Exit status 1 if\n"
    "any case failed.\n\n"
    "options:\n"
    "  --dim NAME=MIN..MAX[:K]\n"
    "                        bounds of the symbolic size NAME, and with :K only\n"
    "                        the multiples of K in them; NAME=N is N..N (repeatable)\n"
    "  --rtol R, --atol A    the float tolerances (default 1e-3 and 1e-7, ONNX's for its\n"
    "                        node tests; a deep network's f32 outputs may need an atol\n"
    "                        near a few ulps of their largest magnitude)\n",
    cmd_onnx_test,
};

enum outcome { CASE_PASS, CASE_FAIL, CASE_SKIP };

#define MAX_TENSORS 64

typedef struct data_set {
    uint32_t input_count, output_count;
    kiln_tensor *inputs[MAX_TENSORS];
    char *input_names[MAX_TENSORS];
    kiln_tensor *outputs[MAX_TENSORS];
} data_set;

static void release_data_set(data_set *set)
{
    for (uint32_t i = 0; i < set->input_count; i++) {
        kiln_tensor_free(set->inputs[i]);
        free(set->input_names[i]);
    }
    for (uint32_t i = 0; i < set->output_count; i++)
        kiln_tensor_free(set->outputs[i]);
    memset(set, 0, sizeof *set);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Read DIR/PREFIX_K.pb for K = 0, 1, ... until one is missing. */
static kiln_status read_tensors(const char *dir, const char *prefix, kiln_tensor **tensors, char **names,
                                uint32_t *count, kiln_error *err)
{
    char path[4096];
    for (*count = 0; *count < MAX_TENSORS; (*count)++) {
        snprintf(path, sizeof path, "%s/%s_%u.pb", dir, prefix, *count);
        if (!file_exists(path))
            return KILN_OK;
        kiln_status status = kiln_onnx_tensor_read_file(path, NULL, &tensors[*count], names ? &names[*count] : NULL, err);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test_data_set_* directories of `dir`, sorted. */
static uint32_t list_data_sets(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d)
        return 0;
    uint32_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (strncmp(entry->d_name, "test_data_set_", 14) != 0)
            continue;
        char **grown = realloc(*out, (count + 1) * sizeof *grown);
        if (!grown)
            break;
        *out = grown;
        if (!((*out)[count] = strdup(entry->d_name)))
            break;
        count++;
    }
    closedir(d);
    if (count)
        qsort(*out, count, sizeof **out, compare_names);
    return count;
}


/*
 * One unit in the last place of bf16 at `value` (8 significant bits). A
 * bf16 result may differ from the expected one by this much through
 * rounding alone: ONNX leaves the rounding of a conversion to BFLOAT16
 * unspecified, and its test data truncate where kiln rounds to nearest.
 */
static double bf16_ulp(double value)
{
    int exponent;
    frexp(value, &exponent);
    return ldexp(1.0, exponent - 8 > -133 ? exponent - 8 : -133);
}

static bool is_float_dtype(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
}

static double element_as_double(const kiln_tensor *t, uint64_t i)
{
    const void *p = kiln_tensor_const_data(t);
    switch (kiln_tensor_dtype(t)) {
    case KILN_F32: return ((const float *)p)[i];
    case KILN_F64: return ((const double *)p)[i];
    case KILN_F16: return kiln_f16_to_f32(((const uint16_t *)p)[i]);
    case KILN_BF16: return kiln_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return 0;
    }
}

/*
 * Compare `actual` with `expected`; on a mismatch write what differs to
 * `why`. Floats: |a - e| <= atol + rtol * |e| (NaN matches NaN, an
 * infinity only itself); other dtypes: the same bytes.
 */
static bool outputs_match(const kiln_tensor *actual, const kiln_tensor *expected, double rtol, double atol, char *why,
                          size_t size)
{
    char a_shape[128], e_shape[128];
    kiln_tensor_format_shape(actual, a_shape, sizeof a_shape);
    kiln_tensor_format_shape(expected, e_shape, sizeof e_shape);
    if (kiln_tensor_dtype(actual) != kiln_tensor_dtype(expected)) {
        snprintf(why, size, "dtype %s, expected %s", kiln_dtype_name(kiln_tensor_dtype(actual)),
                 kiln_dtype_name(kiln_tensor_dtype(expected)));
        return false;
    }
    if (strcmp(a_shape, e_shape) != 0) {
        snprintf(why, size, "shape %s, expected %s", a_shape, e_shape);
        return false;
    }
    uint64_t count = kiln_tensor_element_count(expected);
    kiln_dtype dtype = kiln_tensor_dtype(expected);
    if (!is_float_dtype(dtype)) {
        size_t element = kiln_dtype_size(dtype);
        const uint8_t *a = kiln_tensor_const_data(actual), *e = kiln_tensor_const_data(expected);
        for (uint64_t i = 0; i < count; i++)
            if (memcmp(a + i * element, e + i * element, element) != 0) {
                snprintf(why, size, "element %llu differs (exact comparison of %s)", (unsigned long long)i,
                         kiln_dtype_name(dtype));
                return false;
            }
        return true;
    }
    double worst = 0;
    uint64_t worst_index = 0;
    bool matched = true;
    for (uint64_t i = 0; i < count; i++) {
        double a = element_as_double(actual, i), e = element_as_double(expected, i);
        if (isnan(a) && isnan(e))
            continue;
        double excess;
        if (isnan(a) || isnan(e) || isinf(a) || isinf(e))
            excess = a == e ? 0 : INFINITY;
        else
            excess = fabs(a - e) - fmax(atol + rtol * fabs(e), dtype == KILN_BF16 ? bf16_ulp(e) : 0);
        if (excess > 0 || isnan(excess)) {
            if (matched || excess > worst) {
                worst = excess;
                worst_index = i;
            }
            matched = false;
        }
    }
    if (!matched)
        snprintf(why, size, "worst error at element %llu: got %.9g, expected %.9g (rtol %g, atol %g)",
                 (unsigned long long)worst_index, element_as_double(actual, worst_index),
                 element_as_double(expected, worst_index), rtol, atol);
    return matched;
}

/* The dtype graph value `name` declares (inputs, or outputs when `outputs`); KILN_DTYPE_INVALID if unknown. */
static kiln_dtype declared_dtype(const kiln_onnx_model *model, bool outputs, const char *name)
{
    uint32_t count = outputs ? kiln_onnx_model_output_count(model) : kiln_onnx_model_input_count(model);
    kiln_onnx_value_info info;
    for (uint32_t i = 0; i < count; i++)
        if (kiln_onnx_model_value(model, outputs, i, &info, NULL) == KILN_OK && strcmp(info.name, name) == 0 &&
            info.kind == KILN_ONNX_VALUE_TENSOR)
            return info.dtype;
    return KILN_DTYPE_INVALID;
}

/*
 * The ONNX test data store a BFLOAT16 value as a UINT16 tensor of its bit
 * patterns (numpy has no bfloat16). When the graph declares BFLOAT16 and
 * the data file holds u16, the tensor becomes bf16 with the same bits.
 */
static kiln_status retype_bf16_data(kiln_tensor **tensor, kiln_dtype declared, kiln_error *err)
{
    if (declared != KILN_BF16 || kiln_tensor_dtype(*tensor) != KILN_U16)
        return KILN_OK;
    kiln_tensor *retyped;
    kiln_status status =
        kiln_tensor_new(KILN_BF16, kiln_tensor_rank(*tensor), kiln_tensor_shape(*tensor), &retyped, err);
    if (status != KILN_OK)
        return status;
    size_t bytes = (size_t)kiln_tensor_element_count(*tensor) * sizeof(uint16_t);
    if (bytes)
        memcpy(kiln_tensor_data(retyped), kiln_tensor_const_data(*tensor), bytes);
    kiln_tensor_free(*tensor);
    *tensor = retyped;
    return KILN_OK;
}

typedef struct test_options {
    const kiln_onnx_dim *dims;
    uint32_t dim_count;
    double rtol, atol; /* float comparison: |a - e| <= atol + rtol * |e| */
} test_options;

/* Run one data set of a case. @return the outcome, `message` saying why unless it passed. */
static enum outcome run_data_set(const kiln_onnx_model *model, const char *name, const char *set_dir,
                                 const test_options *options, char *message, size_t size)
{
    data_set set = {0};
    kiln_onnx_result *result = NULL;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    const char **kiln_names = NULL;
    const kiln_tensor **values = NULL;
    uint32_t input_count = 0;
    void *bytes = NULL;
    size_t length = 0;
    kiln_error err;
    enum outcome outcome = CASE_FAIL;
    if (read_tensors(set_dir, "input", set.inputs, set.input_names, &set.input_count, &err) != KILN_OK ||
        read_tensors(set_dir, "output", set.outputs, NULL, &set.output_count, &err) != KILN_OK) {
        outcome = err.code == KILN_ERR_UNSUPPORTED_DTYPE ? CASE_SKIP : CASE_FAIL;
        snprintf(message, size, "%s", err.message);
        goto done;
    }
    /* Data files name their tensor, or else follow the order of the graph inputs that are not initializers. */
    const char *names[MAX_TENSORS];
    uint32_t next_input = 0;
    uint32_t graph_inputs = kiln_onnx_model_input_count(model), graph_outputs = kiln_onnx_model_output_count(model);
    kiln_onnx_value_info info;
    for (uint32_t i = 0; i < set.input_count; i++) {
        if (set.input_names[i][0]) {
            names[i] = set.input_names[i];
            continue;
        }
        names[i] = "";
        while (next_input < graph_inputs) {
            if (kiln_onnx_model_value(model, false, next_input++, &info, NULL) == KILN_OK && !info.is_initializer) {
                names[i] = info.name;
                break;
            }
        }
    }
    for (uint32_t i = 0; i < set.input_count; i++)
        if (retype_bf16_data(&set.inputs[i], declared_dtype(model, false, names[i]), &err) != KILN_OK) {
            snprintf(message, size, "%s", err.message);
            goto done;
        }
    for (uint32_t o = 0; o < set.output_count && o < graph_outputs; o++)
        if (kiln_onnx_model_value(model, true, o, &info, &err) != KILN_OK ||
            retype_bf16_data(&set.outputs[o], declared_dtype(model, true, info.name), &err) != KILN_OK) {
            snprintf(message, size, "%s", err.message);
            goto done;
        }
    kiln_onnx_options import_options;
    kiln_onnx_options_default(&import_options);
    import_options.program_name = name;
    import_options.dims = options->dims;
    import_options.dim_count = options->dim_count;
    import_options.known_input_count = set.input_count;
    import_options.known_input_names = names;
    import_options.known_inputs = (const kiln_tensor *const *)set.inputs;
    kiln_status status = kiln_onnx_import(model, &import_options, &result, &err);
    if (status != KILN_OK) {
        bool unsupported = status == KILN_ERR_UNSUPPORTED_OP || status == KILN_ERR_UNSUPPORTED_DTYPE;
        /* A given value whose rank, size or dtype contradicts the graph's declaration is a defect of the case. */
        bool contradicts = status == KILN_ERR_RANK_MISMATCH || status == KILN_ERR_SHAPE_GUARD ||
                           status == KILN_ERR_DTYPE_MISMATCH;
        outcome = unsupported || contradicts ? CASE_SKIP : CASE_FAIL;
        snprintf(message, size, "%s%s", contradicts ? "the data set contradicts the model: " : "",
                 kiln_onnx_result_unsupported_count(result) ? kiln_onnx_result_unsupported(result, 0) : err.message);
        goto done;
    }
    if (kiln_builder_encode(kiln_onnx_result_builder(result), NULL, &bytes, &length, &err) != KILN_OK ||
        kiln_program_load_memory(bytes, length, NULL, &program, NULL, &err) != KILN_OK) {
        snprintf(message, size, "%s", err.message);
        goto done;
    }
    input_count = kiln_onnx_result_input_count(result);
    kiln_names = calloc(input_count + 1, sizeof *kiln_names);
    values = calloc(input_count + 1, sizeof *values);
    if (!kiln_names || !values) {
        snprintf(message, size, "out of memory");
        goto done;
    }
    for (uint32_t k = 0; k < input_count; k++) {
        const char *onnx_name = kiln_onnx_result_input_onnx_name(result, k);
        for (uint32_t i = 0; i < set.input_count && !values[k]; i++)
            if (strcmp(names[i], onnx_name) == 0)
                values[k] = set.inputs[i];
        if (!values[k]) {
            snprintf(message, size, "the data set has no value for input '%s'", onnx_name);
            goto done;
        }
        kiln_names[k] = kiln_onnx_result_input_kiln_name(result, k);
    }
    /* Each data set runs in a session narrowed to its own sizes: the arena
     * of the whole declared domain may be over the limit (seq up to 2048). */
    if (kiln_session_new_for_inputs(program, NULL, input_count, kiln_names, values, &session, &err) != KILN_OK) {
        snprintf(message, size, "%s", err.message);
        goto done;
    }
    for (uint32_t k = 0; k < input_count; k++) {
        if (kiln_session_set_input(session, kiln_names[k], values[k], &err) != KILN_OK) {
            snprintf(message, size, "%s", err.message);
            goto done;
        }
    }
    if (kiln_session_run(session, &err) != KILN_OK) {
        snprintf(message, size, "run: %s", err.message);
        goto done;
    }
    if (kiln_session_output_count(session) != set.output_count) {
        snprintf(message, size, "%u outputs, the data set expects %u", kiln_session_output_count(session),
                 set.output_count);
        goto done;
    }
    for (uint32_t o = 0; o < set.output_count; o++) {
        char why[384];
        if (!outputs_match(kiln_session_output(session, o), set.outputs[o], options->rtol, options->atol, why,
                           sizeof why)) {
            snprintf(message, size, "output %u ('%s'): %s", o, kiln_session_output_name(session, o), why);
            goto done;
        }
    }
    outcome = CASE_PASS;
done:
    free(kiln_names);
    free(values);
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
    kiln_onnx_result_free(result);
    release_data_set(&set);
    return outcome;
}

/* The case's name: the last component of `dir`, without trailing slashes (*length characters). */
static const char *case_name(const char *dir, int *length)
{
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    *length = (int)(end - start);
    return dir + start;
}

/* A graph input or output that is not a tensor (sequence, map, optional): its data files are not TensorProtos. */
static bool non_tensor_value(const kiln_onnx_model *model, char *message, size_t size)
{
    for (int side = 0; side < 2; side++) {
        uint32_t count = side ? kiln_onnx_model_output_count(model) : kiln_onnx_model_input_count(model);
        kiln_onnx_value_info info;
        for (uint32_t i = 0; i < count; i++) {
            if (kiln_onnx_model_value(model, side, i, &info, NULL) == KILN_OK && info.kind == KILN_ONNX_VALUE_OTHER) {
                snprintf(message, size, "graph %s '%s' is not a tensor (sequences, maps and optionals are not supported)",
                         side ? "output" : "input", info.name);
                return true;
            }
        }
    }
    return false;
}

static enum outcome run_case(const char *dir, const test_options *options, char *message, size_t size)
{
    char path[4096];
    int name_length;
    const char *name = case_name(dir, &name_length);
    snprintf(path, sizeof path, "%.*s/model.onnx", (int)(name - dir) + name_length, dir);
    kiln_onnx_model *model = NULL;
    kiln_error err;
    kiln_status status = kiln_onnx_model_read(path, NULL, &model, &err);
    if (status != KILN_OK) {
        snprintf(message, size, "%s", err.message);
        return status == KILN_ERR_UNSUPPORTED_VERSION ? CASE_SKIP : CASE_FAIL;
    }
    if (non_tensor_value(model, message, size)) {
        kiln_onnx_model_free(model);
        return CASE_SKIP;
    }
    char **sets;
    uint32_t set_count = list_data_sets(dir, &sets);
    enum outcome outcome = CASE_PASS;
    if (set_count == 0) {
        snprintf(message, size, "no test_data_set_N directory");
        outcome = CASE_FAIL;
    }
    for (uint32_t s = 0; s < set_count && outcome == CASE_PASS; s++) {
        char set_dir[4096], why[768];
        snprintf(set_dir, sizeof set_dir, "%s/%s", dir, sets[s]);
        outcome = run_data_set(model, "onnx_test", set_dir, options, why, sizeof why);
        if (outcome != CASE_PASS)
            snprintf(message, size, "%s%s%s", outcome == CASE_FAIL ? sets[s] : "", outcome == CASE_FAIL ? ": " : "",
                     why);
    }
    for (uint32_t s = 0; s < set_count; s++)
        free(sets[s]);
    free(sets);
    kiln_onnx_model_free(model);
    return outcome;
}

static int cmd_onnx_test(int argc, char **argv)
{
    kiln_onnx_dim *dims = calloc((size_t)argc, sizeof *dims);
    /* Copies of the --dim values, which dims' names point into. */
    char **dim_texts = calloc((size_t)argc, sizeof *dim_texts);
    const char **dirs = calloc((size_t)argc, sizeof *dirs);
    uint32_t dim_count = 0, dir_count = 0;
    int rc = CLI_OK;
    if (!dims || !dim_texts || !dirs) {
        rc = cli_error("out of memory");
        goto done;
    }
    double tolerances[2] = {1e-3, 1e-7}; /* rtol, atol */
    for (int i = 1; i < argc; i++) {
        const char *value;
        bool tolerance_taken = false;
        for (int t = 0; t < 2 && !tolerance_taken; t++) {
            const char *name = t ? "--atol" : "--rtol";
            int taken = cli_take_value("onnx-test", argc, argv, &i, name, &value);
            if (taken < 0) {
                rc = CLI_USAGE;
                goto done;
            }
            if (!taken)
                continue;
            char *stop;
            tolerances[t] = strtod(value, &stop);
            if (stop == value || *stop != '\0' || !(tolerances[t] >= 0) || isinf(tolerances[t])) {
                rc = cli_usage_error("onnx-test", "%s takes a finite number >= 0, got '%s'", name, value);
                goto done;
            }
            tolerance_taken = true;
        }
        if (tolerance_taken)
            continue;
        int taken = cli_take_value("onnx-test", argc, argv, &i, "--dim", &value);
        if (taken < 0) {
            rc = CLI_USAGE;
            goto done;
        }
        if (taken) {
            dim_texts[dim_count] = strdup(value); /* parsing cuts it at the '=' */
            if (!dim_texts[dim_count]) {
                rc = cli_error("out of memory");
                goto done;
            }
            if (!onnx_options_parse_dim(dim_texts[dim_count], &dims[dim_count])) {
                rc = cli_usage_error("onnx-test",
                                     "--dim takes NAME=MIN..MAX or NAME=MIN..MAX:K with 0 <= MIN <= MAX and K >= 1 "
                                     "(or NAME=N for N..N), got '%s'",
                                     value);
                goto done;
            }
            dim_count++;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = cli_usage_error("onnx-test", "unknown option '%s'", argv[i]);
            goto done;
        }
        dirs[dir_count++] = argv[i];
    }
    if (dir_count == 0) {
        rc = cli_usage_error("onnx-test", "missing DIR");
        goto done;
    }
    test_options options = {dims, dim_count, tolerances[0], tolerances[1]};
    uint32_t counts[3] = {0, 0, 0};
    for (uint32_t d = 0; d < dir_count; d++) {
        char message[1024] = "";
        enum outcome outcome = run_case(dirs[d], &options, message, sizeof message);
        counts[outcome]++;
        int length;
        const char *name = case_name(dirs[d], &length);
        if (outcome == CASE_PASS)
            term_printf(stdout, "pass %.*s\n", length, name);
        else
            term_printf(stdout, "%s %.*s: %s\n", outcome == CASE_FAIL ? "fail" : "skip", length, name, message);
        fflush(stdout);
    }
    printf("%u passed, %u failed, %u skipped\n", counts[CASE_PASS], counts[CASE_FAIL], counts[CASE_SKIP]);
    rc = counts[CASE_FAIL] ? CLI_FAILED : CLI_OK;
done:
    for (uint32_t d = 0; dim_texts && d < (uint32_t)argc; d++)
        free(dim_texts[d]);
    free(dim_texts);
    free(dims);
    free(dirs);
    return rc;
}
