/*
 * scale.c — a program outside kiln's tree, built against an installed kiln
 * (tests/api/install_tree.sh: pkg-config's kiln.pc, <kiln/kiln.h>,
 * libkiln.so): build y = 2*x + 1 for x: f64[batch, 2], batch in 2..4,
 * save it, load it back, run it on ones(3, 2) and print the first row.
 *
 *   cc scale.c -o scale $(pkg-config --cflags --libs kiln)
 *   ./scale scale.kiln      # first row [3.0, 3.0]
 */
#include <stdio.h>

#include <kiln/kiln.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "scale.kiln";
    kiln_builder *b = NULL;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_tensor *x = NULL;
    kiln_error err;
    kiln_value input, two, one, doubled, y;
    int ok = kiln_builder_new("scale", &b, &err) == KILN_OK
          && kiln_builder_add_dim(b, "batch", 2, 4, &err) == KILN_OK
          && kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &input, &err) == KILN_OK
          && kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err) == KILN_OK
          && kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err) == KILN_OK
          && kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, input}, &doubled, &err) == KILN_OK
          && kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err) == KILN_OK
          && kiln_builder_add_output(b, "y", y, &err) == KILN_OK
          && kiln_builder_save(b, path, NULL, &err) == KILN_OK
          && kiln_program_load(path, NULL, &program, NULL, &err) == KILN_OK
          && kiln_session_new(program, NULL, &session, &err) == KILN_OK
          && kiln_tensor_new(KILN_F64, 2, (const int64_t[]){3, 2}, &x, &err) == KILN_OK;
    if (ok) {
        double *values = kiln_tensor_data(x);
        for (int i = 0; i < 6; i++)
            values[i] = 1.0;
        ok = kiln_session_set_input(session, "x", x, &err) == KILN_OK && kiln_session_run(session, &err) == KILN_OK;
    }
    if (ok) {
        const double *row = kiln_tensor_const_data(kiln_session_output(session, 0));
        printf("first row [%.1f, %.1f] (kiln %s)\n", row[0], row[1], kiln_version());
    } else {
        fprintf(stderr, "scale: %s\n", err.message);
    }
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);
    kiln_builder_free(b);
    return ok ? 0 : 1;
}
