/*
 * scale — the seed example: build y = 2*x + 1 for x: f64[batch, 2] with
 * batch in 2..4, save it, load it back, run it on ones(3, 2), then show
 * what the contract says about ones(5, 2).
 *
 * Usage: scale [ARTIFACT_PATH]   (default ./scale.kiln)
 */
#include <stdio.h>
#include <stdlib.h>

#include <kiln/kiln.h>

static int fail(const char *what, const kiln_error *err)
{
    fprintf(stderr, "scale: %s: %s\n", what, err->message);
    return 1;
}

/* Build and save the Scale program. */
static int build_and_save(const char *path)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    int rc = 0;
    if (kiln_builder_new("scale", &b, &err) != KILN_OK ||
        kiln_builder_set_metadata(b, "producer", "kiln examples/scale.c", &err) != KILN_OK ||
        kiln_builder_add_dim(b, "batch", 2, 4, &err) != KILN_OK ||
        kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err) != KILN_OK ||
        kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err) != KILN_OK ||
        kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err) != KILN_OK ||
        kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err) != KILN_OK ||
        kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err) != KILN_OK ||
        kiln_builder_add_output(b, "y", y, &err) != KILN_OK ||
        kiln_builder_save(b, path, NULL, &err) != KILN_OK)
        rc = fail("building the program", &err);
    kiln_builder_free(b);
    return rc;
}

/* Run `session` on ones(batch, 2); print the result or the guard message. */
static int run_on_ones(kiln_session *session, int64_t batch)
{
    kiln_tensor *x = NULL;
    kiln_error err;
    int64_t shape[2] = {batch, 2};
    if (kiln_tensor_new(KILN_F64, 2, shape, &x, &err) != KILN_OK)
        return fail("allocating the input", &err);
    double *values = kiln_tensor_data(x);
    for (int64_t i = 0; i < batch * 2; i++)
        values[i] = 1.0;
    int rc = 0;
    if (kiln_session_set_input(session, "x", x, &err) != KILN_OK) {
        rc = fail("binding x", &err);
    } else if (kiln_session_run(session, &err) != KILN_OK) {
        /* The contract refused the input: that message is the point. */
        printf("%s\n", err.message);
    } else {
        const kiln_tensor *y = kiln_session_output(session, 0);
        const double *out = kiln_tensor_const_data(y);
        char shape_text[64];
        kiln_tensor_format_shape(y, shape_text, sizeof shape_text);
        printf("shape %s\n", shape_text);
        printf("first row [%.1f, %.1f]\n", out[0], out[1]);
    }
    kiln_tensor_free(x);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "scale.kiln";
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_error err;
    int rc = build_and_save(path);
    if (rc)
        return rc;
    if (kiln_program_load(path, NULL, &program, NULL, &err) != KILN_OK)
        return fail("loading the artifact", &err);
    if (kiln_session_new(program, NULL, &session, &err) != KILN_OK) {
        kiln_program_free(program);
        return fail("creating a session", &err);
    }
    rc = run_on_ones(session, 3);
    if (!rc)
        rc = run_on_ones(session, 5);
    kiln_session_free(session);
    kiln_program_free(program);
    return rc;
}
