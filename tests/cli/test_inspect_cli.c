/*
 * test_inspect_cli.c — kiln inspect, kiln dot and kiln diff, driven as a
 * user drives them:
 *
 *  - the --json output of inspect and diff against the field tables of
 *    spec/inspect-json.md (every documented field present when its
 *    condition holds, with its type; nothing undocumented);
 *  - exact stdout of the commands in tests/cli/expected/commands.txt,
 *    run from tests/golden (tests/golden/expected holds what an earlier CLI
 *    printed for the same artifacts, kept as released, never rewritten);
 *  - diff classing scripted interface changes, each built with the C
 *    builder API, per spec/compatibility.md §6;
 *  - colour only on a terminal and never with NO_COLOR;
 *  - dot's boxes (op, node name, key attributes, folded weights with their
 *    shapes), --weights, and --svg/--png rendered by Graphviz when it is
 *    installed (and a clear error when it is not).
 *
 * Usage: test_inspect_cli KILN_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pty.h>

#include <kiln/kiln.h>

#include "json_tree.h"

static const char *kiln_binary, *source_root;
static char golden_dir[1024];
static char work_dir[] = "/tmp/kiln-inspect-XXXXXX";

/* ----------------------------------------------------------------- running */

typedef struct command_result {
    int exit_code;
    char *out;
    char *err;
} command_result;

static char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t capacity = 4096, size = 0;
    char *text = malloc(capacity);
    size_t n;
    while (text && (n = fread(text + size, 1, capacity - size - 1, f)) > 0) {
        size += n;
        if (capacity - size - 1 == 0) {
            char *grown = realloc(text, capacity * 2);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            capacity *= 2;
        }
    }
    fclose(f);
    if (text)
        text[size] = '\0';
    return text;
}

static void result_free(command_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Run a shell command line in `dir`, capturing stdout and stderr. */
static void run_in(command_result *r, const char *dir, const char *fmt, ...)
{
    char command[4096], full[6000];
    va_list args;
    va_start(args, fmt);
    vsnprintf(command, sizeof command, fmt, args);
    va_end(args);
    snprintf(full, sizeof full, "cd '%s' && %s >'%s/stdout.txt' 2>'%s/stderr.txt'", dir, command, work_dir, work_dir);
    int status = system(full);
    assert_true(WIFEXITED(status));
    r->exit_code = WEXITSTATUS(status);
    char path[1200];
    snprintf(path, sizeof path, "%s/stdout.txt", work_dir);
    r->out = read_whole_file(path);
    snprintf(path, sizeof path, "%s/stderr.txt", work_dir);
    r->err = read_whole_file(path);
    assert_non_null(r->out);
    assert_non_null(r->err);
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, haystack);
}

static json_value *parse_stdout(const command_result *r)
{
    json_value *json = json_parse(r->out);
    if (!json)
        fail_msg("stdout is not one JSON value:\n%s", r->out);
    return json;
}

/* ------------------------------------------------- the documented schema */

typedef struct field_row {
    char path[160];
    char type[200];
    char when[200];
} field_row;

typedef struct schema {
    field_row rows[256];
    size_t count;
} schema;

/* Read the table after "<!-- fields: NAME -->" in spec/inspect-json.md. */
static void load_schema(const char *name, schema *out)
{
    char path[1200], marker[64];
    snprintf(path, sizeof path, "%s/spec/inspect-json.md", source_root);
    snprintf(marker, sizeof marker, "<!-- fields: %s -->", name);
    char *text = read_whole_file(path);
    assert_non_null(text);
    char *at = strstr(text, marker);
    assert_non_null(at);
    out->count = 0;
    for (char *line = strchr(at, '\n') + 1; line && *line == '|'; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char cells[4][200];
        int cell = 0;
        const char *c = line + 1;
        while (cell < 4 && *c && *c != '\n') {
            const char *end = c;
            while (*end && *end != '|' && *end != '\n')
                end++;
            size_t length = (size_t)(end - c);
            while (length && c[0] == ' ') {
                c++;
                length--;
            }
            while (length && c[length - 1] == ' ')
                length--;
            if (length >= sizeof cells[0])
                length = sizeof cells[0] - 1;
            memcpy(cells[cell], c, length);
            cells[cell][length] = '\0';
            cell++;
            c = *end == '|' ? end + 1 : end;
        }
        if (cell < 3 || cells[0][0] != '`')
            continue; /* the header and its rule */
        field_row *row = &out->rows[out->count++];
        size_t length = strlen(cells[0]) - 2;
        memcpy(row->path, cells[0] + 1, length);
        row->path[length] = '\0';
        snprintf(row->type, sizeof row->type, "%s", cells[1]);
        snprintf(row->when, sizeof row->when, "%s", cells[2]);
        assert_true(out->count < sizeof out->rows / sizeof out->rows[0]);
    }
    free(text);
    assert_true(out->count > 10);
}

static bool type_matches(const json_value *v, const char *type)
{
    if (strstr(type, " or null") && v->kind == JSON_NULL)
        return true;
    if (strncmp(type, "string", 6) == 0)
        return v->kind == JSON_STRING;
    if (strncmp(type, "integer", 7) == 0)
        return v->kind == JSON_NUMBER && v->number == (double)(int64_t)v->number;
    if (strncmp(type, "number", 6) == 0)
        return v->kind == JSON_NUMBER;
    if (strncmp(type, "boolean", 7) == 0)
        return v->kind == JSON_BOOL;
    if (strncmp(type, "array", 5) == 0)
        return v->kind == JSON_ARRAY;
    if (strncmp(type, "object", 6) == 0)
        return v->kind == JSON_OBJECT;
    fail_msg("spec/inspect-json.md: unknown type '%s'", type);
    return false;
}

/* Check every value at `path` (segments separated by '.', "[]" for every
 * element, "*" for every member) has `type`. @return values checked. */
static size_t check_path(const json_value *node, const char *path, const char *type, const char *full, bool *missing)
{
    if (!*path) {
        if (!type_matches(node, type))
            fail_msg("%s: expected %s, found JSON kind %d", full, type, (int)node->kind);
        return 1;
    }
    if (node->kind == JSON_NULL)
        return 0; /* under an "X or null" parent that is null */
    char segment[160];
    const char *dot = strchr(path, '.');
    size_t length = dot ? (size_t)(dot - path) : strlen(path);
    memcpy(segment, path, length);
    segment[length] = '\0';
    const char *rest = dot ? dot + 1 : "";
    bool each = length > 2 && strcmp(segment + length - 2, "[]") == 0;
    if (each)
        segment[length - 2] = '\0';
    size_t checked = 0;
    if (strcmp(segment, "*") == 0) {
        assert_int_equal(node->kind, JSON_OBJECT);
        for (size_t i = 1; i < node->count; i += 2)
            checked += check_path(&node->items[i], rest, type, full, missing);
        return checked;
    }
    const json_value *member = json_get(node, segment);
    if (!member) {
        *missing = true;
        return 0;
    }
    if (!each)
        return check_path(member, rest, type, full, missing);
    if (member->kind != JSON_ARRAY)
        fail_msg("%s: '%s' is not an array", full, segment);
    for (size_t i = 0; i < member->count; i++)
        checked += check_path(&member->items[i], rest, type, full, missing);
    return checked;
}

static bool condition_holds(const char *when, const char *const *conditions)
{
    for (size_t i = 0; conditions[i]; i++)
        if (strcmp(when, conditions[i]) == 0)
            return true;
    return false;
}

static bool documented(const schema *s, const char *path)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->rows[i].path, path) == 0)
            return true;
    return false;
}

/* Every member and scalar element in the output has a row. */
static void check_documented(const schema *s, const json_value *node, const char *path)
{
    char child[400];
    if (node->kind == JSON_OBJECT) {
        for (size_t i = 0; i + 1 < node->count; i += 2) {
            snprintf(child, sizeof child, "%s%s%s", path, path[0] ? "." : "", node->items[i].string);
            char wildcard[400];
            snprintf(wildcard, sizeof wildcard, "%s%s*", path, path[0] ? "." : "");
            if (documented(s, wildcard))
                snprintf(child, sizeof child, "%s", wildcard);
            if (!documented(s, child))
                fail_msg("field '%s' is printed but not documented in spec/inspect-json.md", child);
            check_documented(s, &node->items[i + 1], child);
        }
    } else if (node->kind == JSON_ARRAY) {
        snprintf(child, sizeof child, "%s[]", path);
        for (size_t i = 0; i < node->count; i++) {
            if (node->items[i].kind != JSON_OBJECT && !documented(s, child))
                fail_msg("array elements '%s' are printed but not documented", child);
            check_documented(s, &node->items[i], child);
        }
    }
}

/*
 * Validate `json` against schema `s` under `conditions` (NULL-terminated):
 * a row whose condition holds must be present (in every element, for a
 * path through arrays) with its type; a row whose condition does not hold
 * must be absent; and nothing undocumented may appear.
 */
static void validate(const schema *s, const json_value *json, const char *const *conditions, const char *what)
{
    for (size_t i = 0; i < s->count; i++) {
        const field_row *row = &s->rows[i];
        bool holds = condition_holds(row->when, conditions);
        bool missing = false;
        size_t checked = check_path(json, row->path, row->type, row->path, &missing);
        if (holds && missing)
            fail_msg("%s: documented field '%s' (when %s) is missing", what, row->path, row->when);
        if (!holds && checked)
            fail_msg("%s: field '%s' is present, but its condition (%s) does not hold", what, row->path, row->when);
    }
    check_documented(s, json, "");
}

/* -------------------------------------------------------- built artifacts */

static kiln_error build_err;

#define B(call)                                                            \
    do {                                                                   \
        if ((call) != KILN_OK)                                             \
            fail_msg("%s: %s", #call, build_err.message);                  \
    } while (0)

/*
 * An artifact that fills every optional field: multiple_of, a derived dim,
 * semantic checks of every kind, evidence, metadata, weights of every kind,
 * compressed weights.
 */
static void build_rich(const char *path)
{
    kiln_builder *b;
    kiln_error *err = &build_err;
    kiln_value x, c, w, bias, steps, prod, y, z;
    B(kiln_builder_new("rich", &b, err));
    B(kiln_builder_set_metadata(b, "producer", "tests/cli/test_inspect_cli.c", err));
    B(kiln_builder_set_metadata(b, "description", "every optional field", err));
    B(kiln_builder_add_dim(b, "batch", 2, 8, err));
    B(kiln_builder_set_dim_multiple_of(b, "batch", 2, err));
    B(kiln_builder_add_dim(b, "n", 1, 4, err));
    B(kiln_builder_add_derived_dim(b, "two_n", "2*n", err));
    B(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 4]", &x, err));
    B(kiln_builder_add_input(b, "c", KILN_I64, "[n]", &c, err));
    kiln_input_check check;
    kiln_input_check_default(&check);
    check.has_range = true;
    check.min = -10;
    check.max = 10;
    check.finite_only = true;
    check.unit = "m/s";
    check.description = "speed";
    B(kiln_builder_set_input_check(b, "x", &check, err));
    kiln_input_check_default(&check);
    check.category_count = 3;
    check.categories = (const int64_t[]){0, 1, 2};
    B(kiln_builder_set_input_check(b, "c", &check, err));
    float weights[4] = {1, 2, 3, 4}, biases[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    float ramp[1024];
    for (int i = 0; i < 1024; i++)
        ramp[i] = (float)(i % 7);
    int64_t step_values[1] = {1};
    B(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){4}, weights, &w, err));
    B(kiln_builder_add_weight(b, "bias", KILN_WEIGHT_BUFFER, KILN_F32, 1, (int64_t[]){4}, biases, &bias, err));
    B(kiln_builder_add_weight(b, "steps", KILN_WEIGHT_CONSTANT, KILN_I64, 1, (int64_t[]){1}, step_values, &steps,
                              err));
    kiln_value unused_ramp;
    B(kiln_builder_add_weight(b, "ramp", KILN_WEIGHT_CONSTANT, KILN_F32, 2, (int64_t[]){32, 32}, ramp,
                              &unused_ramp, err));
    B(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, w}, &prod, err));
    B(kiln_builder_add_op(b, "add", 2, (kiln_value[]){prod, bias}, &y, err));
    B(kiln_builder_add_op(b, "add", 2, (kiln_value[]){c, steps}, &z, err));
    B(kiln_builder_add_output(b, "y", y, err));
    B(kiln_builder_add_output(b, "z", z, err));
    B(kiln_builder_add_output(b, "ramp", unused_ramp, err));

    /* Zeros in: y = bias, z = 1, ramp as stored. */
    kiln_tensor *tx, *tc, *ty, *tz;
    B(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 4}, &tx, err));
    B(kiln_tensor_new(KILN_I64, 1, (int64_t[]){3}, &tc, err));
    B(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 4}, &ty, err));
    B(kiln_tensor_new(KILN_I64, 1, (int64_t[]){3}, &tz, err));
    for (int i = 0; i < 8; i++)
        ((float *)kiln_tensor_data(ty))[i] = 0.5f;
    for (int i = 0; i < 3; i++)
        ((int64_t *)kiln_tensor_data(tz))[i] = 1;
    kiln_compare_rule rules[2] = {{KILN_COMPARE_TOLERANCE, 1e-6, 1e-6, true}, {KILN_COMPARE_EXACT, 0, 0, false}};
    B(kiln_builder_add_evidence(b, &(kiln_evidence_case){
            .name = "zeros",
            .input_count = 2,
            .input_names = (const char *[]){"x", "c"},
            .inputs = (const kiln_tensor *[]){tx, tc},
            .output_count = 2,
            .output_names = (const char *[]){"y", "z"},
            .expected = (const kiln_tensor *[]){ty, tz},
            .rules = rules}, err));
    kiln_tensor_free(tx);
    kiln_tensor_free(tc);
    kiln_tensor_free(ty);
    kiln_tensor_free(tz);
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.compression_level = 9;
    B(kiln_builder_save(b, path, &options, err));
    kiln_builder_free(b);
}

/* The program of the diff scripts: y = x*w + 1, z = neg(t), with knobs. */
typedef struct variant {
    const char *batch;        /* name of the first dim (default "batch") */
    int64_t batch_min, batch_max, batch_multiple;
    const char *x_name;       /* default "x" */
    kiln_dtype x_dtype;       /* default f32 */
    const char *x_shape;      /* default "[batch, 4]" */
    bool drop_t;              /* no input t, no output z */
    bool t_own_dim;           /* t: [m, n] instead of [batch, n] */
    bool add_u;               /* an input u and an output u_neg */
    const char *z_name;       /* default "z"; "" drops output z */
    bool add_output;          /* an output xw = x*w */
    const char *producer;     /* metadata producer */
    float w_scale;            /* weight values 1..4 times this (default 1) */
    bool evidence;            /* the evidence case "zeros" */
    bool check_x;             /* x in -100..100 */
} variant;

static void build_variant(const variant *given, const char *path)
{
    variant v = *given;
    char shape[128];
    kiln_error *err = &build_err;
    if (!v.batch)
        v.batch = "batch";
    if (!v.batch_min && !v.batch_max) {
        v.batch_min = 2;
        v.batch_max = 8;
    }
    if (!v.x_name)
        v.x_name = "x";
    if (!v.x_dtype)
        v.x_dtype = KILN_F32;
    if (!v.z_name)
        v.z_name = "z";
    if (v.w_scale == 0)
        v.w_scale = 1;
    kiln_builder *b;
    kiln_value x, t, u, w, one, prod, y, z;
    B(kiln_builder_new("scripted", &b, err));
    B(kiln_builder_set_metadata(b, "producer", v.producer ? v.producer : "tests/cli/test_inspect_cli.c", err));
    B(kiln_builder_add_dim(b, v.batch, v.batch_min, v.batch_max, err));
    if (v.batch_multiple > 1)
        B(kiln_builder_set_dim_multiple_of(b, v.batch, v.batch_multiple, err));
    B(kiln_builder_add_dim(b, "n", 1, 4, err));
    if (v.t_own_dim)
        B(kiln_builder_add_dim(b, "m", 2, 8, err));
    if (v.x_shape)
        snprintf(shape, sizeof shape, "%s", v.x_shape);
    else
        snprintf(shape, sizeof shape, "[%s, 4]", v.batch);
    B(kiln_builder_add_input(b, v.x_name, v.x_dtype, shape, &x, err));
    if (!v.drop_t) {
        snprintf(shape, sizeof shape, "[%s, n]", v.t_own_dim ? "m" : v.batch);
        B(kiln_builder_add_input(b, "t", KILN_I64, shape, &t, err));
    }
    if (v.add_u) {
        snprintf(shape, sizeof shape, "[%s, 4]", v.batch);
        B(kiln_builder_add_input(b, "u", KILN_F32, shape, &u, err));
    }
    if (v.check_x) {
        kiln_input_check check;
        kiln_input_check_default(&check);
        check.has_range = true;
        check.min = -100;
        check.max = 100;
        B(kiln_builder_set_input_check(b, v.x_name, &check, err));
    }
    if (v.x_dtype == KILN_F64) {
        double values[4] = {1 * v.w_scale, 2 * v.w_scale, 3 * v.w_scale, 4 * v.w_scale};
        B(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 1, (int64_t[]){4}, values, &w, err));
    } else {
        float values[4] = {1 * v.w_scale, 2 * v.w_scale, 3 * v.w_scale, 4 * v.w_scale};
        B(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){4}, values, &w, err));
    }
    B(kiln_builder_add_scalar(b, v.x_dtype, 1.0, &one, err));
    B(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, w}, &prod, err));
    B(kiln_builder_add_op(b, "add", 2, (kiln_value[]){prod, one}, &y, err));
    B(kiln_builder_add_output(b, "y", y, err));
    if (!v.drop_t) {
        B(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){t}, &z, err));
        if (v.z_name[0])
            B(kiln_builder_add_output(b, v.z_name, z, err));
    }
    if (v.add_u) {
        kiln_value u_neg;
        B(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){u}, &u_neg, err));
        B(kiln_builder_add_output(b, "u_neg", u_neg, err));
    }
    if (v.add_output)
        B(kiln_builder_add_output(b, "xw", prod, err));
    if (v.evidence) {
        kiln_tensor *tx, *tt, *ty;
        B(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 4}, &tx, err));
        B(kiln_tensor_new(KILN_I64, 2, (int64_t[]){2, 1}, &tt, err));
        B(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 4}, &ty, err));
        for (int i = 0; i < 8; i++)
            ((float *)kiln_tensor_data(ty))[i] = 1.0f;
        kiln_compare_rule rule = {KILN_COMPARE_EXACT, 0, 0, false};
        B(kiln_builder_add_evidence(b, &(kiln_evidence_case){
                .name = "zeros",
                .input_count = 2,
                .input_names = (const char *[]){"x", "t"},
                .inputs = (const kiln_tensor *[]){tx, tt},
                .output_count = 1,
                .output_names = (const char *[]){"y"},
                .expected = (const kiln_tensor *[]){ty},
                .rules = &rule}, err));
        kiln_tensor_free(tx);
        kiln_tensor_free(tt);
        kiln_tensor_free(ty);
    }
    B(kiln_builder_save(b, path, NULL, err));
    kiln_builder_free(b);
}

/* ------------------------------------------------------------------ tests */

static const char *const inspect_cases[][2] = {
    /* artifact (relative to tests/golden), conditions beyond "always" */
    {"v1.0/scale.kiln", "readable runnable"},
    {"v1.0/scale-evidence.kiln", "readable runnable"},
    {"v1.0/scale-signed.kiln", "readable runnable signed"},
    {"v1.0/weights.kiln", "readable runnable"},
    {"v1.0/compressed.kiln", "readable runnable"},
    {"future/minor-1.1-unknown-ancillary.kiln", "readable runnable"},
    {"future/minor-1.1-unknown-critical.kiln", "readable"},
    {"future/minor-1.1-unknown-feature.kiln", "readable"},
    {"future/op-add-v2.kiln", "readable"},
    {"future/three-missing-ops.kiln", "readable"},
    {"future/major-2.0.kiln", "unreadable"},
};

static void conditions_of(const char *list, char storage[8][32], const char *out[9])
{
    size_t n = 0;
    out[n++] = "always";
    const char *at = list;
    while (*at && n < 8) {
        size_t length = strcspn(at, " ");
        snprintf(storage[n], sizeof storage[n], "%.*s", (int)length, at);
        out[n] = storage[n];
        n++;
        at += length;
        while (*at == ' ')
            at++;
    }
    out[n] = NULL;
}

static void check_inspect_json(const schema *s, const char *dir, const char *file, const char *conditions_text)
{
    char storage[8][32];
    const char *conditions[9];
    command_result r;
    conditions_of(conditions_text, storage, conditions);
    bool readable = strstr(conditions_text, "unreadable") == NULL;
    run_in(&r, dir, "'%s' inspect '%s' --json", kiln_binary, file);
    if (r.exit_code != (readable ? 0 : 1))
        fail_msg("inspect %s --json: exit %d\n%s", file, r.exit_code, r.err);
    json_value *json = parse_stdout(&r);
    validate(s, json, conditions, file);
    assert_string_equal(json_get(json, "schema")->string, "kiln-inspect/1");
    assert_string_equal(json_get(json, "file")->string, file);
    assert_int_equal(json_get(json, "runnable")->boolean, strstr(conditions_text, "runnable") != NULL);
    json_free(json);
    result_free(&r);
}

static void inspect_json_follows_the_documented_schema(void **state)
{
    (void)state;
    schema s;
    load_schema("inspect", &s);
    for (size_t i = 0; i < sizeof inspect_cases / sizeof inspect_cases[0]; i++)
        check_inspect_json(&s, golden_dir, inspect_cases[i][0], inspect_cases[i][1]);
    check_inspect_json(&s, work_dir, "rich.kiln", "readable runnable");
}

static void inspect_json_holds_the_values(void **state)
{
    (void)state;
    command_result r;
    run_in(&r, work_dir, "'%s' inspect rich.kiln --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    const json_value *dims = json_get(json, "dims");
    assert_int_equal(dims->count, 2);
    assert_string_equal(json_get(json_at(dims, 0), "name")->string, "batch");
    assert_int_equal((int)json_get(json_at(dims, 0), "multiple_of")->number, 2);
    const json_value *derived = json_at(json_get(json, "derived_dims"), 0);
    assert_string_equal(json_get(derived, "name")->string, "two_n");
    assert_string_equal(json_get(derived, "expression")->string, "2*n");
    const json_value *x = json_at(json_get(json, "inputs"), 0);
    assert_string_equal(json_get(x, "shape")->string, "[batch, 4]");
    assert_string_equal(json_at(json_get(x, "axes"), 0)->string, "batch");
    const json_value *checks = json_get(json, "semantic_checks");
    assert_int_equal(checks->count, 2);
    assert_true(json_get(json_get(json_at(checks, 0), "range"), "min")->number == -10.0);
    assert_true(json_get(json_at(checks, 0), "finite_only")->boolean);
    assert_string_equal(json_get(json_at(checks, 0), "unit")->string, "m/s");
    assert_int_equal(json_get(json_at(checks, 1), "categories")->count, 3);
    assert_int_equal(json_get(json_at(checks, 1), "range")->kind, JSON_NULL);
    const json_value *weights = json_get(json, "weights");
    assert_int_equal((int)json_get(weights, "count")->number, 4);
    assert_true(json_get(weights, "compressed")->boolean);
    assert_true(json_get(weights, "compression_ratio")->number > 1.5);
    assert_string_equal(json_get(json_at(json_get(weights, "largest"), 0), "name")->string, "ramp");
    const json_value *plan = json_get(json, "memory_plan");
    assert_true(json_get(plan, "arena_bytes")->number > 0);
    assert_true(json_get(plan, "intermediate_bytes")->number >= json_get(plan, "arena_bytes")->number);
    const json_value *evidence = json_at(json_get(json, "evidence"), 0);
    assert_string_equal(json_get(evidence, "name")->string, "zeros");
    const json_value *rule = json_get(json_at(json_get(evidence, "outputs"), 0), "rule");
    assert_string_equal(json_get(rule, "kind")->string, "tolerance");
    assert_true(json_get(rule, "nan_equal")->boolean);
    const json_value *ops = json_get(json, "ops");
    assert_string_equal(json_get(json_at(ops, 1), "name")->string, "add");
    assert_int_equal((int)json_get(json_at(ops, 1), "nodes")->number, 2);
    json_free(json);
    result_free(&r);

    /* The human form shows the same facts. */
    run_in(&r, work_dir, "'%s' inspect rich.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "rich: format 1.0, inference, producer \"tests/cli/test_inspect_cli.c\"\n");
    assert_contains(r.out, "  batch  2..8   2\n");
    assert_contains(r.out, "  two_n    2*n\n");
    assert_contains(r.out, "  x      in -10..10, finite  m/s   speed\n");
    assert_contains(r.out, "  c      one of {0, 1, 2}    -     -\n");
    assert_contains(r.out, "stored zlib-compressed: ");
    assert_contains(r.out, "  zeros  y       atol 1e-06 rtol 1e-06, NaN equal\n");
    assert_contains(r.out, "         z       exact\n");
    result_free(&r);
}

static void inspect_shows_what_it_can_of_unrunnable_artifacts(void **state)
{
    (void)state;
    command_result r;
    run_in(&r, golden_dir, "'%s' inspect future/three-missing-ops.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "future/three-missing-ops.kiln: format 1.0, cannot run here\n");
    assert_contains(r.out, "cannot run here:\n");
    assert_contains(r.out, "op future_op_a version 1 is not available");
    assert_contains(r.out, "op future_op_b version 3 is not available");
    assert_contains(r.out, "op add version 9 is not available");
    assert_contains(r.out, "not shown:");
    assert_contains(r.out, "sections (7)\n");
    result_free(&r);
    run_in(&r, golden_dir, "'%s' inspect future/minor-1.1-unknown-critical.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "format 1.1, cannot run here");
    assert_contains(r.out, "section-unknown-critical");
    assert_contains(r.out, "  XCRT  critical");
    result_free(&r);
    run_in(&r, golden_dir, "'%s' inspect future/major-2.0.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: future/major-2.0.kiln: format version 2.0 is not readable");
    result_free(&r);
    /* Damage is an error, never a partial description. */
    run_in(&r, work_dir, "cp '%s/v1.0/scale.kiln' damaged.kiln && printf '\\377' | "
                         "dd of=damaged.kiln bs=1 seek=200 conv=notrunc 2>/dev/null && '%s' inspect damaged.kiln",
           golden_dir, kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "checksum mismatch");
    result_free(&r);
}

static void quiet_help_and_usage(void **state)
{
    (void)state;
    command_result r;
    run_in(&r, golden_dir, "'%s' inspect v1.0/scale.kiln --quiet", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "scale: format 1.0, inference, producer \"kiln examples/scale.c\"\n");
    result_free(&r);
    run_in(&r, golden_dir, "'%s' diff v1.0/scale.kiln v1.0/weights.kiln --quiet", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.out, "");
    result_free(&r);
    run_in(&r, golden_dir, "'%s' dot v1.0/scale.kiln --quiet > /dev/null", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    result_free(&r);
    const char *usage_errors[] = {
        "inspect", "inspect a b", "inspect v1.0/scale.kiln --bogus", "dot", "dot a b", "dot v1.0/scale.kiln --json",
        "diff", "diff v1.0/scale.kiln", "diff a b c", "diff v1.0/scale.kiln v1.0/scale.kiln --bogus",
    };
    for (size_t i = 0; i < sizeof usage_errors / sizeof usage_errors[0]; i++) {
        run_in(&r, golden_dir, "'%s' %s", kiln_binary, usage_errors[i]);
        if (r.exit_code != 2)
            fail_msg("kiln %s: exit %d, expected 2", usage_errors[i], r.exit_code);
        assert_contains(r.err, "kiln: error: ");
        result_free(&r);
    }
    const char *verbs[] = {"inspect", "dot", "diff"};
    for (size_t i = 0; i < 3; i++) {
        run_in(&r, golden_dir, "'%s' %s --help", kiln_binary, verbs[i]);
        assert_int_equal(r.exit_code, 0);
        assert_contains(r.out, "usage: kiln ");
        assert_contains(r.out, "--quiet");
        result_free(&r);
    }
    run_in(&r, golden_dir, "'%s' diff missing.kiln v1.0/scale.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "missing.kiln");
    result_free(&r);
    run_in(&r, golden_dir, "'%s' dot future/op-add-v2.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "cannot draw the graph");
    assert_contains(r.err, "op add version 2");
    result_free(&r);
}

/* Every command in tests/cli/expected/commands.txt prints exactly its file. */
static void golden_outputs_match_exactly(void **state)
{
    (void)state;
    char path[1200], expected_dir[1100];
    snprintf(expected_dir, sizeof expected_dir, "%s/tests/cli/expected", source_root);
    snprintf(path, sizeof path, "%s/commands.txt", expected_dir);
    char *list = read_whole_file(path);
    assert_non_null(list);
    size_t compared = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *tab = strchr(line, '\t'), *second = tab ? strchr(tab + 1, '\t') : NULL;
        if (!second)
            fail_msg("tests/cli/expected/commands.txt: not FILE<tab>STATUS<tab>ARGUMENTS: '%s'", line);
        *tab = *second = '\0';
        const char *expected_name = line, *arguments = second + 1;
        int expected_status = atoi(tab + 1);
        command_result r;
        run_in(&r, golden_dir, "'%s' %s", kiln_binary, arguments);
        if (r.exit_code != expected_status)
            fail_msg("kiln %s: exit %d, expected %d\n%s", arguments, r.exit_code, expected_status, r.err);
        snprintf(path, sizeof path, "%s/%s", expected_dir, expected_name);
        char *expected = read_whole_file(path);
        if (!expected)
            fail_msg("missing expected output %s", path);
        if (strcmp(expected, r.out) != 0) {
            char show[4000];
            snprintf(show, sizeof show, "cd '%s' && '%s' %s | diff -u '%s' - >&2", golden_dir, kiln_binary, arguments,
                     path);
            if (system(show) == -1)
                perror("system");
            fail_msg("kiln %s: stdout differs from tests/cli/expected/%s (regenerate with "
                     "tests/cli/expected/regenerate.sh after checking the difference)",
                     arguments, expected_name);
        }
        free(expected);
        result_free(&r);
        compared++;
    }
    free(list);
    assert_true(compared >= 6);
}

/* ------------------------------------------------------- the diff scripts */

typedef struct scripted {
    const char *what;
    variant a, b;
    int exit_code;             /* 0 compatible, 1 breaking */
    const char *kind;          /* a change that must be reported */
    const char *class;         /* its class */
    const char *verdict;       /* when non-NULL, the verdict */
} scripted;

static bool has_change(const json_value *changes, const char *kind, const char *class)
{
    for (size_t i = 0; i < changes->count; i++) {
        const json_value *c = json_at(changes, i);
        if (strcmp(json_get(c, "kind")->string, kind) == 0 && strcmp(json_get(c, "class")->string, class) == 0)
            return true;
    }
    return false;
}

static void run_script(const schema *s, const scripted *t, const char *a_path, const char *b_path)
{
    command_result r;
    run_in(&r, work_dir, "'%s' diff '%s' '%s' --json", kiln_binary, a_path, b_path);
    if (r.exit_code != t->exit_code)
        fail_msg("%s: exit %d, expected %d\n%s%s", t->what, r.exit_code, t->exit_code, r.out, r.err);
    json_value *json = parse_stdout(&r);
    static const char *const conditions[] = {"always", NULL};
    validate(s, json, conditions, t->what);
    const json_value *changes = json_get(json, "changes");
    if (t->kind && !has_change(changes, t->kind, t->class))
        fail_msg("%s: no %s change of kind %s in:\n%s", t->what, t->class, t->kind, r.out);
    assert_int_equal(json_get(json, "breaking")->boolean, t->exit_code == 1);
    assert_int_equal(json_get(json_get(json, "counts"), "breaking")->number > 0 || !json_get(json, "compared")->boolean,
                     t->exit_code == 1);
    if (t->verdict)
        assert_string_equal(json_get(json, "verdict")->string, t->verdict);
    json_free(json);
    result_free(&r);
}

static void diff_classes_scripted_changes(void **state)
{
    (void)state;
    schema s;
    load_schema("diff", &s);
    const variant base = {0};
    const scripted scripts[] = {
        {"nothing changed", base, base, 0, NULL, NULL, "identical artifacts"},
        {"metadata changed", base, {.producer = "someone else"}, 0, "metadata-changed", "compatible",
         "same program and weights"},
        {"same program, new weights", base, {.w_scale = 2}, 0, "weights-changed", "compatible",
         "same program, new weights"},
        {"evidence added", base, {.evidence = true}, 0, "evidence-added", "compatible", "same program and weights"},
        {"dim range narrowed", base, {.batch_min = 2, .batch_max = 6}, 1, "dim-narrowed", "breaking", NULL},
        {"dim range widened", base, {.batch_min = 1, .batch_max = 16}, 0, "dim-widened", "compatible", NULL},
        {"multiple_of added", base, {.batch_multiple = 2}, 1, "constraint-added", "breaking", NULL},
        {"multiple_of removed", {.batch_multiple = 2}, base, 0, "constraint-removed", "compatible", NULL},
        {"fixed size where a dim was", base, {.x_shape = "[4, 4]"}, 1, "axis-fixed", "breaking", NULL},
        {"input renamed", base, {.x_name = "features"}, 1, "input-renamed", "breaking", NULL},
        {"input removed", base, {.drop_t = true}, 1, "input-removed", "breaking", NULL},
        {"input added", base, {.add_u = true}, 1, "input-added", "breaking", NULL},
        {"dtype changed", base, {.x_dtype = KILN_F64}, 1, "input-dtype", "breaking", NULL},
        {"rank changed", base, {.x_shape = "[batch, 4, 1]"}, 1, "input-rank", "breaking", NULL},
        {"output removed", base, {.z_name = ""}, 1, "output-removed", "breaking", NULL},
        {"output renamed", base, {.z_name = "negated"}, 1, "output-renamed", "breaking", NULL},
        {"output added", base, {.add_output = true}, 0, "output-added", "compatible", NULL},
        {"dim renamed", base, {.batch = "rows"}, 0, "dim-renamed", "compatible", NULL},
        {"two axes must now be equal", {.t_own_dim = true}, base, 1, "constraint-added", "breaking", NULL},
        {"two axes no longer tied", base, {.t_own_dim = true}, 0, "constraint-removed", "compatible", NULL},
        {"semantic check added", base, {.check_x = true}, 1, "check-added", "breaking", NULL},
        {"semantic check removed", {.check_x = true}, base, 0, "check-removed", "compatible", NULL},
    };
    char a_path[64], b_path[64];
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        snprintf(a_path, sizeof a_path, "%s/script-%zu-a.kiln", work_dir, i);
        snprintf(b_path, sizeof b_path, "%s/script-%zu-b.kiln", work_dir, i);
        build_variant(&scripts[i].a, a_path);
        build_variant(&scripts[i].b, b_path);
        run_script(&s, &scripts[i], a_path, b_path);
    }

    /* An op version this runtime lacks: B cannot run here. */
    char a_golden[1200], b_golden[1200];
    snprintf(a_golden, sizeof a_golden, "%s/v1.0/scale.kiln", golden_dir);
    snprintf(b_golden, sizeof b_golden, "%s/future/op-add-v2.kiln", golden_dir);
    const scripted lacking = {"op version this runtime lacks", base, base, 1, "op-missing", "breaking",
                              "not comparable: a program cannot be decoded here"};
    run_script(&s, &lacking, a_golden, b_golden);
    /* A newer minor that loads: only the format (and the skipped section's digest) differ. */
    snprintf(b_golden, sizeof b_golden, "%s/future/minor-1.1-unknown-ancillary.kiln", golden_dir);
    const scripted newer = {"newer minor that loads", base, base, 0, "format-changed", "compatible",
                            "same program and weights"};
    run_script(&s, &newer, a_golden, b_golden);
}

static void diff_messages_name_the_values(void **state)
{
    (void)state;
    command_result r;
    run_in(&r, work_dir, "'%s' diff script-4-a.kiln script-4-b.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.out, "breaking (1)\n");
    assert_contains(r.out, "dim-narrowed  dim 'batch'  2..8 -> 2..6: 7 is no longer accepted\n");
    assert_contains(r.out, "result: breaking (1 breaking, ");
    result_free(&r);
    run_in(&r, work_dir, "'%s' diff script-6-a.kiln script-6-b.kiln", kiln_binary);
    assert_contains(r.out, "constraint-added  dim 'batch'  2..8 -> 2..8 multiple_of 2: 3 is no longer accepted\n");
    result_free(&r);
    run_in(&r, work_dir, "'%s' diff script-2-a.kiln script-2-b.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "identities: same program, new weights\n");
    assert_contains(r.out, "  program   ");
    assert_contains(r.out, "  same\n");
    assert_contains(r.out, "result: compatible (0 breaking, 1 compatible)\n");
    result_free(&r);
}

/* ------------------------------------------------------------------- dot */

static void dot_is_deterministic_and_labelled(void **state)
{
    (void)state;
    command_result first, second;
    run_in(&first, work_dir, "'%s' dot rich.kiln", kiln_binary);
    run_in(&second, work_dir, "'%s' dot rich.kiln", kiln_binary);
    assert_int_equal(first.exit_code, 0);
    assert_string_equal(first.out, second.out);
    assert_contains(first.out, "digraph \"rich\" {\n");
    assert_contains(first.out, "  v0 [shape=house, style=\"filled\", fillcolor=\"#dbeafe\", color=\"#1d4ed8\", "
                               "label=<<B>x</B><BR/><FONT POINT-SIZE=\"8\">f32[batch, 4]</FONT>>];\n");
    /* Weights are folded into the box of each op that reads them, with their shapes ... */
    assert_contains(first.out, "<B>mul</B></TD></TR><TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\">"
                               "<FONT COLOR=\"#374151\">w</FONT> ⟨4⟩</FONT></TD></TR></TABLE>>];\n");
    assert_contains(first.out, "<FONT COLOR=\"#374151\">steps</FONT> ⟨1⟩");
    /* ... so they are not nodes, and have no edges; except a weight that is an output. */
    assert_null(strstr(first.out, "v2 [shape=cylinder"));
    assert_null(strstr(first.out, "v2 -> "));
    assert_contains(first.out, "  v5 [shape=cylinder, style=filled, fillcolor=\"#f3f4f6\", color=\"#6b7280\", "
                               "label=<ramp<BR/><FONT POINT-SIZE=\"8\">constant f32 ⟨32×32⟩</FONT>>];\n");
    /* Edges carry the shape of their value; outputs are boxes of their own. */
    assert_contains(first.out, "  v0 -> v6 [label=\"batch×4\"];\n");
    assert_contains(first.out, "  v6 -> v7 [label=\"batch×4\"];\n");
    assert_contains(first.out, "  v1 -> v8 [label=\"n\"];\n");
    assert_contains(first.out, "  o0 [shape=invhouse");
    assert_contains(first.out, "  v5 -> o2 [color=\"#15803d\"];\n");
    result_free(&first);
    result_free(&second);

    /* --weights draws them as nodes again, with an edge to each use. */
    run_in(&first, work_dir, "'%s' dot rich.kiln --weights", kiln_binary);
    assert_int_equal(first.exit_code, 0);
    assert_contains(first.out, "  v2 [shape=cylinder, style=filled, fillcolor=\"#f3f4f6\", color=\"#6b7280\", "
                               "label=<w<BR/><FONT POINT-SIZE=\"8\">parameter f32 ⟨4⟩</FONT>>];\n");
    assert_contains(first.out, "  v2 -> v6;\n");
    assert_null(strstr(first.out, "</FONT> ⟨4⟩</FONT></TD></TR>"));
    result_free(&first);
}

/* A conv box: op, node name, the attributes that say something, W and B. */
static void dot_shows_names_attributes_and_weights(void **state)
{
    (void)state;
    command_result r;
    run_in(&r, work_dir, "'%s' dot conv.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "<B>conv</B></TD></TR><TR><TD><FONT POINT-SIZE=\"7\" COLOR=\"#4b5563\">"
                           "/layer1/layer1.0/conv1/Conv</FONT></TD></TR>");
    assert_contains(r.out, "kernel 3×3  stride 2×2</FONT></TD></TR><TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\">"
                           "pads 1,1,1,1  group 2</FONT>");
    assert_contains(r.out, "<FONT COLOR=\"#374151\">W</FONT> ⟨4×1×3×3⟩");
    assert_contains(r.out, "<FONT COLOR=\"#374151\">B</FONT> ⟨4⟩");
    /* Neutral values (dilation 1) are left out. */
    assert_null(strstr(r.out, "dilation"));
    /* A name is escaped for the label; a long one keeps its end. */
    assert_contains(r.out, "a&lt;b&amp;c&gt;&quot;d&quot;");
    assert_contains(r.out, ">…g/path/of/modules/that/goes/on/and/on/relu/Relu</FONT>");
    assert_contains(r.out, "  v3 -> v4 [label=\"batch×4×4×4\"];\n");
    result_free(&r);
    /* inspect counts the named nodes; its JSON too. */
    run_in(&r, work_dir, "'%s' inspect conv.kiln", kiln_binary);
    assert_contains(r.out, "conv: format 1.2, inference\n");
    assert_contains(r.out, "ops (3 distinct, 3 nodes, 3 named)\n");
    result_free(&r);
    run_in(&r, work_dir, "'%s' inspect conv.kiln --json", kiln_binary);
    assert_contains(r.out, "\"named_node_count\": 3");
    result_free(&r);
    /* A runtime guard names its node's name, in the table and the JSON. */
    run_in(&r, work_dir,
           "(printf 'kiln 1.0\\nprogram \"g\"\\nstrict false\\ndim k in 2..8\\ninput a: f32[3, k]\\n"
           "input b: f32[4, 5]\\n%%%%0 = matmul(a, b) name \"/fc/MatMul\"\\noutput y = %%%%0\\n' > g.ktxt && "
           "'%s' asm g.ktxt -o g.kiln >/dev/null && '%s' inspect g.kiln && '%s' inspect g.kiln --json)",
           kiln_binary, kiln_binary, kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "  node  op      name        checked before every run\n"
                           "     0  matmul  /fc/MatMul  inner sizes k (a axis 1) and 4 (b axis 0) are equal\n");
    assert_contains(r.out, "\"node_name\": \"/fc/MatMul\"");
    result_free(&r);
    /* diff: names are a compatible change, one line for all of them. */
    run_in(&r, work_dir,
           "(sed 's/ name \"[^\"]*\"//' g.ktxt > gu.ktxt && '%s' asm gu.ktxt -o gu.kiln >/dev/null && "
           "'%s' diff gu.kiln g.kiln)",
           kiln_binary, kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "  node-names-changed  node names  1 of 1 node named differently (names are metadata, "
                           "outside the program identity)\n");
    assert_contains(r.out, "identities: same program and weights\n");
    result_free(&r);
}

static void dot_renders_with_graphviz(void **state)
{
    (void)state;
    command_result r;
    /* Without Graphviz on PATH, --svg says what to install. */
    run_in(&r, work_dir, "env PATH=/nonexistent '%s' dot conv.kiln --svg conv.svg", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: --svg needs Graphviz's 'dot' program, which is not on PATH\n");
    assert_contains(r.err, "apt-get install graphviz");
    result_free(&r);
    if (system("command -v dot >/dev/null 2>&1") != 0)
        skip(); /* Graphviz is not installed here: nothing to render with */
    const char *files[] = {"v1.0/scale.kiln", "v1.0/weights.kiln", "v1.0/compressed.kiln"};
    for (size_t i = 0; i < 3; i++) {
        run_in(&r, golden_dir, "'%s' dot %s | dot -Tsvg", kiln_binary, files[i]);
        assert_int_equal(r.exit_code, 0);
        assert_contains(r.out, "<svg");
        assert_string_equal(r.err, "");
        result_free(&r);
    }
    run_in(&r, work_dir,
           "('%s' dot conv.kiln --svg conv.svg --png conv.png && grep -c -e '<svg' -e '/layer1/layer1.0/conv1/Conv' "
           "conv.svg && head -c 4 conv.png | od -An -c)",
           kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
    assert_contains(r.out, "2\n"); /* both lines found in the SVG */
    assert_contains(r.out, "P   N   G"); /* the PNG signature */
    result_free(&r);
}

/* ------------------------------------------------------------ terminals */

/* Run kiln with stdout on a pseudo-terminal; collect what it wrote. */
static void run_on_terminal(const char *no_color, char *const *args, char *out, size_t size)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(golden_dir) != 0)
            _exit(126);
        if (no_color)
            setenv("NO_COLOR", no_color, 1);
        else
            unsetenv("NO_COLOR");
        setenv("TERM", "xterm", 1);
        execv(kiln_binary, args);
        _exit(127);
    }
    size_t used = 0;
    for (;;) {
        ssize_t n = read(master, out + used, size - used - 1);
        if (n <= 0)
            break; /* EIO once the child has gone */
        used += (size_t)n;
        if (used + 1 >= size)
            break;
    }
    out[used] = '\0';
    int status;
    waitpid(pid, &status, 0);
    close(master);
    assert_true(WIFEXITED(status));
}

static void colour_only_on_a_terminal_without_no_color(void **state)
{
    (void)state;
    static char out[65536];
    /* execv takes argv as char *; kiln reads nothing from argv[0]. */
    char *inspect[] = {"kiln", "inspect", "v1.0/scale.kiln", NULL};
    char *diff[] = {"kiln", "diff", "v1.0/scale.kiln", "v1.0/weights.kiln", NULL};
    run_on_terminal(NULL, inspect, out, sizeof out);
    assert_contains(out, "\033[1m");
    run_on_terminal(NULL, diff, out, sizeof out);
    assert_contains(out, "\033[31m");
    run_on_terminal("1", inspect, out, sizeof out);
    assert_contains(out, "scale");
    assert_null(strchr(out, '\033'));
    run_on_terminal("1", diff, out, sizeof out);
    assert_contains(out, "breaking");
    assert_null(strchr(out, '\033'));
    /* An empty NO_COLOR does not count (no-color.org). */
    run_on_terminal("", inspect, out, sizeof out);
    assert_contains(out, "\033[1m");
    /* Not a terminal: never colour, whatever the environment. */
    command_result r;
    run_in(&r, golden_dir, "env -u NO_COLOR TERM=xterm '%s' inspect v1.0/scale.kiln", kiln_binary);
    assert_null(strchr(r.out, '\033'));
    result_free(&r);
}

/* ------------------------------------------------------------------- main */

/*
 * y = relu(conv(x, W, B)) with kernel 3x3, stride 2, pads 1, group 2, and
 * node names: one plain, one with characters an HTML label escapes, one
 * longer than dot shows whole.
 */
static void build_conv(const char *path)
{
    kiln_builder *b;
    kiln_error *err = &build_err;
    kiln_value x, w, bias, conv, relu, y;
    float weights[4 * 1 * 3 * 3] = {0}, biases[4] = {0};
    B(kiln_builder_new("conv", &b, err));
    B(kiln_builder_add_dim(b, "batch", 1, 2, err));
    B(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 2, 8, 8]", &x, err));
    B(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 4, (int64_t[]){4, 1, 3, 3}, weights, &w, err));
    B(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){4}, biases, &bias, err));
    kiln_attribute attributes[] = {
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){3, 3}, .count = 2},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){2, 2}, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1, 1, 1, 1}, .count = 4},
        {.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1, 1}, .count = 2},
        {.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 2},
    };
    B(kiln_builder_add_op_with_attributes(b, "conv", 3, (kiln_value[]){x, w, bias}, 5, attributes, &conv, err));
    B(kiln_builder_add_op(b, "relu", 1, &conv, &relu, err));
    B(kiln_builder_add_op(b, "neg", 1, &relu, &y, err));
    B(kiln_builder_set_node_name(b, conv, "/layer1/layer1.0/conv1/Conv", err));
    B(kiln_builder_set_node_name(b, relu, "/a/very/long/path/of/modules/that/goes/on/and/on/relu/Relu", err));
    B(kiln_builder_set_node_name(b, y, "a<b&c>\"d\"", err));
    B(kiln_builder_add_output(b, "y", y, err));
    B(kiln_builder_save(b, path, NULL, err));
    kiln_builder_free(b);
}

static int set_up(void **state)
{
    (void)state;
    char path[200];
    snprintf(path, sizeof path, "%s/rich.kiln", work_dir);
    build_rich(path);
    snprintf(path, sizeof path, "%s/conv.kiln", work_dir);
    build_conv(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_inspect_cli KILN_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln_binary = argv[1];
    source_root = argv[2];
    snprintf(golden_dir, sizeof golden_dir, "%s/tests/golden", source_root);
    if (!mkdtemp(work_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inspect_json_follows_the_documented_schema),
        cmocka_unit_test(inspect_json_holds_the_values),
        cmocka_unit_test(inspect_shows_what_it_can_of_unrunnable_artifacts),
        cmocka_unit_test(quiet_help_and_usage),
        cmocka_unit_test(golden_outputs_match_exactly),
        cmocka_unit_test(diff_classes_scripted_changes),
        cmocka_unit_test(diff_messages_name_the_values),
        cmocka_unit_test(dot_is_deterministic_and_labelled),
        cmocka_unit_test(dot_shows_names_attributes_and_weights),
        cmocka_unit_test(dot_renders_with_graphviz),
        cmocka_unit_test(colour_only_on_a_terminal_without_no_color),
    };
    int failures = cmocka_run_group_tests(tests, set_up, NULL);
    char cleanup[600];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", work_dir);
    if (system(cleanup) != 0)
        fprintf(stderr, "could not remove %s\n", work_dir);
    return failures;
}
