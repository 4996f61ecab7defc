/*
 * test_bench_profile_cli.c — `kiln bench --profile` (issue #18 point 3):
 * the `profile` member of its JSON against the field table of
 * spec/bench-json.md (every documented field present with its type, none
 * undocumented), the invariants of §3 (times non-negative, shares summing
 * to 100%, longest first, fused nodes pointing at the node that applied
 * them), the path each node of a known program reports, the text report,
 * and the option errors.
 *
 * The program: a conv and the relu after it (fused into the conv where
 * kiln has oneDNN), a flatten, an add, and a neg no output reads.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_harness.h"
#include "json_tree.h"

static const char *kiln_binary;
static const char *source_root;

static const char program_text[] = "kiln 1.0\n"
                                   "program \"profiled\"\n"
                                   "dim batch in 1..4\n"
                                   "input x: f32[batch, 1, 6, 6]\n"
                                   "weight w: f32[2, 1, 2, 2] = [0.5, -0.25, 0.125, 1, -1, 0.5, 0.25, -0.5]\n"
                                   "weight b: f32[2] = [0.1, -0.1]\n"
                                   "%c = conv(x, w, b)\n"
                                   "%r = relu(%c)\n"
                                   "%f = flatten(%r)\n"
                                   "%s = add(%f, %f)\n"
                                   "%unused = neg(x)\n"
                                   "output y = %s\n";

enum { NODE_CONV, NODE_RELU, NODE_FLATTEN, NODE_ADD, NODE_NEG, NODE_COUNT };

static void load_rows(void);

static int setup(void **state)
{
    (void)state;
    load_rows();
    if (harness_init("kiln-bench-profile-cli") != 0)
        return -1;
    write_work_file("profiled.ktxt", program_text);
    command_result r;
    run(&r, "'%s' asm profiled.ktxt -o profiled.kiln", kiln_binary);
    if (r.exit_code != 0) {
        fprintf(stderr, "kiln asm failed: %s\n", r.err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    harness_cleanup();
    return 0;
}

static json_value *parse_stdout(const command_result *r)
{
    json_value *json = json_parse(r->out);
    if (!json)
        fail_msg("stdout is not one JSON value:\n%s", r->out);
    return json;
}

static const json_value *member(const json_value *object, const char *key)
{
    const json_value *value = json_get(object, key);
    if (!value)
        fail_msg("no member '%s' in the JSON", key);
    return value;
}

/* ----------------------------------------------------- the field table */

typedef struct field_row {
    char path[160];
    char type[64];
} field_row;

static field_row rows[128];
static size_t row_count;

static char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
    }
    if (text)
        text[size] = '\0';
    fclose(f);
    return text;
}

/* Copy table cell `index` (0 = the first) of `line` into `out`, trimmed. */
static void table_cell(const char *line, int index, char *out, size_t size)
{
    const char *c = line + 1;
    for (int i = 0; i < index && c; i++) {
        c = strchr(c, '|');
        c = c ? c + 1 : NULL;
    }
    out[0] = '\0';
    if (!c)
        return;
    while (*c == ' ')
        c++;
    size_t length = strcspn(c, "|\n");
    while (length && c[length - 1] == ' ')
        length--;
    if (length >= size)
        length = size - 1;
    memcpy(out, c, length);
    out[length] = '\0';
}

/* The rows after "<!-- fields: bench-profile -->" in spec/bench-json.md. */
static void load_rows(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/spec/bench-json.md", source_root);
    char *text = read_whole_file(path);
    assert_non_null(text);
    char *at = strstr(text, "<!-- fields: bench-profile -->");
    assert_non_null(at);
    row_count = 0;
    for (char *line = strchr(at, '\n') + 1; line && *line == '|'; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char name[200], type[64];
        table_cell(line, 0, name, sizeof name);
        table_cell(line, 1, type, sizeof type);
        if (name[0] != '`')
            continue; /* the header and its rule */
        assert_true(row_count < sizeof rows / sizeof rows[0]);
        field_row *row = &rows[row_count++];
        snprintf(row->path, sizeof row->path, "%.*s", (int)strlen(name) - 2, name + 1);
        snprintf(row->type, sizeof row->type, "%s", type);
    }
    free(text);
    assert_true(row_count > 20);
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
    fail_msg("spec/bench-json.md: unknown type '%s'", type);
    return false;
}

static const field_row *documented(const char *path)
{
    for (size_t i = 0; i < row_count; i++)
        if (strcmp(rows[i].path, path) == 0)
            return &rows[i];
    return NULL;
}

/* Every value under `path` (spelled as the table spells it) is documented, with its type. */
static void check_value(const json_value *v, const char *path)
{
    const field_row *row = documented(path);
    /* An array's objects are documented by their fields, as in spec/inspect-json.md. */
    bool element_object = v->kind == JSON_OBJECT && strlen(path) > 2 && strcmp(path + strlen(path) - 2, "[]") == 0;
    if (!row && !element_object)
        fail_msg("'%s' is in the JSON but not in spec/bench-json.md", path);
    if (row && !type_matches(v, row->type))
        fail_msg("'%s' should be %s, found JSON kind %d", path, row->type, (int)v->kind);
    char child[200];
    if (v->kind == JSON_OBJECT)
        for (size_t i = 0; i + 1 < v->count; i += 2) {
            snprintf(child, sizeof child, "%s.%s", path, v->items[i].string);
            check_value(&v->items[i + 1], child);
        }
    if (v->kind == JSON_ARRAY)
        for (size_t i = 0; i < v->count; i++) {
            snprintf(child, sizeof child, "%s[]", path);
            check_value(&v->items[i], child);
        }
}

/* Whether the documented `path` occurs in `v` (under `at`, the path of v). */
static bool occurs(const json_value *v, const char *at, const char *path)
{
    if (strcmp(at, path) == 0)
        return true;
    char child[200];
    if (v->kind == JSON_OBJECT)
        for (size_t i = 0; i + 1 < v->count; i += 2) {
            snprintf(child, sizeof child, "%s.%s", at, v->items[i].string);
            if (occurs(&v->items[i + 1], child, path))
                return true;
        }
    if (v->kind == JSON_ARRAY)
        for (size_t i = 0; i < v->count; i++) {
            snprintf(child, sizeof child, "%s[]", at);
            if (occurs(&v->items[i], child, path))
                return true;
        }
    return false;
}

/* ------------------------------------------------------------ the tests */

static bool has_onednn(void)
{
    command_result r;
    run(&r, "'%s' version --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    return strstr(r.out, "\"onednn\"") != NULL;
}

/* The node object of node index `node` in profile.nodes, or NULL. */
static const json_value *node_entry(const json_value *profile, int node)
{
    const json_value *nodes = member(profile, "nodes");
    for (size_t i = 0; i < nodes->count; i++)
        if ((int)member(json_at(nodes, i), "node")->number == node)
            return json_at(nodes, i);
    return NULL;
}

static const char *path_of(const json_value *profile, int node)
{
    const json_value *entry = node_entry(profile, node);
    if (!entry)
        fail_msg("node %d is not in profile.nodes", node);
    return member(entry, "path")->string;
}

/* §3: times non-negative, longest first, shares summing to 100, cumulative shares adding up, fused nodes consistent. */
static void check_invariants(const json_value *profile, int runs)
{
    assert_int_equal((int)member(profile, "runs")->number, runs);
    assert_true(member(profile, "median_ms")->number >= 0);
    assert_true(member(profile, "unprofiled_median_ms")->number > 0);
    assert_true(member(profile, "node_ms")->number > 0);
    assert_true(member(profile, "node_ms")->number <= member(profile, "run_ms")->number + 1e-6);
    const json_value *nodes = member(profile, "nodes");
    double sum = 0, previous_total = INFINITY;
    for (size_t i = 0; i < nodes->count; i++) {
        const json_value *n = json_at(nodes, i);
        double total = member(n, "total_ms")->number;
        assert_true(total >= 0 && member(n, "per_run_ms")->number >= 0 && member(n, "min_ms")->number >= 0);
        assert_true(member(n, "percent")->number >= 0);
        assert_true(total <= previous_total);
        previous_total = total;
        sum += member(n, "percent")->number;
        assert_true(fabs(member(n, "cumulative_percent")->number - sum) < 0.001 * (double)(i + 1) + 1e-9);
        if (strcmp(member(n, "path")->string, "fused") == 0) {
            int into = (int)member(n, "fused_into")->number;
            assert_true(into < (int)member(n, "node")->number);
            assert_int_equal((int)member(n, "runs")->number, 0);
            assert_int_equal((int)member(n, "fused_runs")->number, runs);
            assert_true(total == 0);
            assert_non_null(node_entry(profile, into));
        } else {
            assert_int_equal(member(n, "fused_into")->kind, JSON_NULL);
            assert_int_equal((int)member(n, "runs")->number, runs);
        }
    }
    assert_true(fabs(sum - 100) < 0.001 * (double)nodes->count + 1e-9);
    const json_value *ops = member(profile, "ops");
    double op_sum = 0;
    for (size_t i = 0; i < ops->count; i++)
        op_sum += member(json_at(ops, i), "percent")->number;
    assert_true(fabs(op_sum - 100) < 0.001 * (double)ops->count + 1e-9);
}

/* With the reference kernels: every documented field, nothing else, and the paths of the known nodes. */
static void reference_profile_json(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench profiled.kiln --runs 7 --warmup 2 --reference --profile --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    const json_value *profile = member(json, "profile");
    check_value(profile, "profile");
    for (size_t i = 0; i < row_count; i++)
        if (!occurs(profile, "profile", rows[i].path) && strcmp(rows[i].path, "profile.nodes[].fused_into") != 0)
            fail_msg("'%s' is documented but not in the JSON", rows[i].path);
    check_invariants(profile, 7);
    assert_int_equal((int)member(profile, "warmup")->number, 2);
    assert_int_equal((int)member(profile, "node_count")->number, NODE_COUNT);
    assert_int_equal((int)member(profile, "nodes_not_run")->number, 1);
    assert_int_equal(member(profile, "nodes")->count, NODE_COUNT - 1);
    assert_null(node_entry(profile, NODE_NEG));
    assert_string_equal(path_of(profile, NODE_CONV), "reference");
    assert_string_equal(path_of(profile, NODE_RELU), "reference");
    assert_string_equal(path_of(profile, NODE_FLATTEN), "view");
    assert_string_equal(path_of(profile, NODE_ADD), "vector");
    const json_value *conv = node_entry(profile, NODE_CONV);
    assert_string_equal(member(conv, "op")->string, "conv");
    assert_string_equal(member(conv, "dtype")->string, "f32");
    const json_value *shape = member(conv, "shape");
    assert_int_equal(shape->count, 4);
    int expected[] = {1, 2, 5, 5};
    for (int a = 0; a < 4; a++)
        assert_int_equal((int)json_at(shape, (size_t)a)->number, expected[a]);
    json_free(json);
}

/* With oneDNN: the conv ran a primitive and applied the relu, reported fused into it. */
static void fast_profile_json(void **state)
{
    (void)state;
    if (!has_onednn())
        skip();
    command_result r;
    run(&r, "'%s' bench profiled.kiln --runs 5 --profile --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    const json_value *profile = member(json, "profile");
    check_value(profile, "profile");
    check_invariants(profile, 5);
    assert_string_equal(path_of(profile, NODE_CONV), "onednn");
    assert_true(member(node_entry(profile, NODE_CONV), "activation_applied")->boolean);
    assert_string_equal(path_of(profile, NODE_RELU), "fused");
    assert_int_equal((int)member(node_entry(profile, NODE_RELU), "fused_into")->number, NODE_CONV);
    /* The ops table keeps the fused relu apart, with no time. */
    const json_value *ops = member(profile, "ops");
    bool seen = false;
    for (size_t i = 0; i < ops->count; i++) {
        const json_value *o = json_at(ops, i);
        if (strcmp(member(o, "op")->string, "relu") == 0) {
            assert_string_equal(member(o, "path")->string, "fused");
            assert_true(member(o, "per_run_ms")->number == 0);
            seen = true;
        }
    }
    assert_true(seen);
    json_free(json);
}

/* Without --profile there is no profile member. */
static void no_profile_without_the_flag(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench profiled.kiln --runs 2 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_null(json_get(json, "profile"));
    json_free(json);
}

/* The text: the runs line, the table cut at --profile-top with a note, the ops. */
static void text_report(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench profiled.kiln --runs 4 --warmup 1 --reference --profile --profile-top 2", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "profile    4 runs after 1 warm-up: median ");
    assert_contains(r.out, "against the unprofiled ");
    assert_contains(r.out, "  node  op ");
    assert_contains(r.out, "  2 of 4 nodes run (--profile-top N for more, --json for all)\n");
    assert_contains(r.out, "f32 [1, 2, 5, 5]");
    assert_contains(r.out, "  op ");
    assert_contains(r.out, "flatten");
    assert_contains(r.out, "view");
    run(&r, "'%s' bench profiled.kiln --runs 4 --warmup 1 --reference --profile", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_true(strstr(r.out, "nodes run (--profile-top") == NULL); /* 4 nodes: all shown */
}

static void option_errors(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench profiled.kiln --profile-top 3", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "--profile-top N says how many nodes --profile shows: add --profile");
    run(&r, "'%s' bench profiled.kiln --profile --profile-top 0", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "--profile-top takes a whole number");
    run(&r, "'%s' bench --help", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "--profile ");
    assert_contains(r.out, "--profile-top N");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s KILN SOURCE_ROOT\n", argv[0]);
        return 2;
    }
    kiln_binary = argv[1];
    source_root = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_profile_json),
        cmocka_unit_test(fast_profile_json),
        cmocka_unit_test(no_profile_without_the_flag),
        cmocka_unit_test(text_report),
        cmocka_unit_test(option_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
