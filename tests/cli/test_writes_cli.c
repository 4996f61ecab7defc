/*
 * test_writes_cli.c — what `kiln sign`, `kiln evidence add` and `kiln
 * keygen --force` do to the files they replace (issue 20, point 8):
 *
 *  - signing or adding evidence keeps a private artifact private (mode
 *    0600 stays 0600; it used to become 0644);
 *  - a symbolic link is written through: the link stays, and the file it
 *    points to is the one signed (the link used to become a regular file,
 *    leaving its target unsigned);
 *  - keygen --force writes new key files and renames them over the old
 *    ones (it used to rewrite the old inode, so a descriptor opened while
 *    the file was readable to others could read the new secret key);
 *  - evidence add refuses a case that fails on this runtime and leaves
 *    the file as it was, unless --force (issue 19, point 3: a wrong
 *    expectation used to be sealed, and only kiln verify found it).
 *
 * Usage: test_writes_cli KILN_BINARY SCALE_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_harness.h"

static const char *kiln_binary, *scale_binary, *source_root;

static struct stat stat_of(const char *name, bool follow)
{
    char path[512];
    struct stat info;
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    if ((follow ? stat(path, &info) : lstat(path, &info)) != 0)
        fail_msg("cannot stat %s", path);
    return info;
}

static unsigned mode_of(const char *name)
{
    return (unsigned)(stat_of(name, true).st_mode & 07777);
}

static void run_ok(const char *command_line)
{
    command_result r;
    run(&r, "%s", command_line);
    if (r.exit_code != 0)
        fail_msg("`%s` exited %d:\n%s%s", command_line, r.exit_code, r.out, r.err);
}

/* A signing key and the outputs of the seed example for ones(3, 2). */
static int setup(void **state)
{
    (void)state;
    char line[2048];
    umask(022);
    snprintf(line, sizeof line,
             "'%s' scale.kiln >/dev/null && '%s' keygen --out signer >/dev/null && "
             "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir ev >/dev/null",
             scale_binary, kiln_binary, kiln_binary, source_root);
    command_result r;
    run(&r, "%s", line);
    return r.exit_code;
}

static void make_private_copy(const char *name)
{
    char line[512];
    snprintf(line, sizeof line, "cp scale.kiln '%s' && chmod 600 '%s'", name, name);
    run_ok(line);
    assert_int_equal(mode_of(name), 0600);
}

static void sign_keeps_a_private_artifact_private(void **state)
{
    (void)state;
    char line[1024];
    make_private_copy("private-signed.kiln");
    snprintf(line, sizeof line, "'%s' sign private-signed.kiln --key signer.key", kiln_binary);
    run_ok(line);
    assert_int_equal(mode_of("private-signed.kiln"), 0600);
    /* -o onto an existing private file keeps that file's mode too. */
    make_private_copy("private-out.kiln");
    snprintf(line, sizeof line, "'%s' sign scale.kiln --key signer.key -o private-out.kiln", kiln_binary);
    run_ok(line);
    assert_int_equal(mode_of("private-out.kiln"), 0600);
}

static void evidence_add_keeps_a_private_artifact_private(void **state)
{
    (void)state;
    char line[1024];
    make_private_copy("private-evidence.kiln");
    snprintf(line, sizeof line,
             "'%s' evidence add private-evidence.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
             "--expect y=ev/y.npy",
             kiln_binary, source_root);
    run_ok(line);
    assert_int_equal(mode_of("private-evidence.kiln"), 0600);
}

/* The link stays a link to the same place; the file it names is signed. */
static void sign_writes_through_a_symbolic_link(void **state)
{
    (void)state;
    char line[1024], target[256];
    run_ok("mkdir -p store && cp scale.kiln store/model.kiln && chmod 640 store/model.kiln && "
           "ln -s store/model.kiln link.kiln");
    snprintf(line, sizeof line, "'%s' sign link.kiln --key signer.key", kiln_binary);
    run_ok(line);
    assert_true(S_ISLNK(stat_of("link.kiln", false).st_mode));
    char path[512];
    snprintf(path, sizeof path, "%s/link.kiln", harness_work_dir);
    ssize_t n = readlink(path, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_string_equal(target, "store/model.kiln");
    assert_int_equal(mode_of("store/model.kiln"), 0640);
    command_result r;
    run(&r, "'%s' verify store/model.kiln --trust signer.pub --require-signature", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "signature  ok, by trusted key");
    run(&r, "ls store");
    assert_string_equal(r.out, "model.kiln\n"); /* no temporary file left */
}

static void evidence_add_writes_through_a_symbolic_link(void **state)
{
    (void)state;
    char line[1024];
    run_ok("mkdir -p store2 && cp scale.kiln store2/model.kiln && ln -s store2/model.kiln link2.kiln");
    snprintf(line, sizeof line,
             "'%s' evidence add link2.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' --expect y=ev/y.npy",
             kiln_binary, source_root);
    run_ok(line);
    assert_true(S_ISLNK(stat_of("link2.kiln", false).st_mode));
    command_result r;
    run(&r, "'%s' verify store2/model.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "evidence   1 case, 0 failed");
}

static void read_all(int fd, char *buffer, size_t size)
{
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    ssize_t n = read(fd, buffer, size - 1);
    assert_true(n > 0);
    buffer[n] = '\0';
}

/*
 * keygen --force gives new inodes with the documented modes, and a
 * descriptor opened on the old secret key file while it was 0644 still
 * reads the old key, not the new one.
 */
static void keygen_force_writes_new_files(void **state)
{
    (void)state;
    char line[1024], path[512], before[256], through_old[256], after[256];
    snprintf(line, sizeof line, "'%s' keygen --out replaced", kiln_binary);
    run_ok(line);
    run_ok("chmod 644 replaced.key");
    struct stat old_key = stat_of("replaced.key", true), old_pub = stat_of("replaced.pub", true);
    snprintf(path, sizeof path, "%s/replaced.key", harness_work_dir);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    read_all(fd, before, sizeof before);

    snprintf(line, sizeof line, "'%s' keygen --out replaced --force", kiln_binary);
    run_ok(line);
    struct stat new_key = stat_of("replaced.key", true), new_pub = stat_of("replaced.pub", true);
    assert_true(new_key.st_ino != old_key.st_ino);
    assert_true(new_pub.st_ino != old_pub.st_ino);
    assert_int_equal(new_key.st_mode & 07777, 0600);
    assert_int_equal(new_pub.st_mode & 07777, 0644);
    read_all(fd, through_old, sizeof through_old);
    close(fd);
    assert_string_equal(through_old, before);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    read_all(fd, after, sizeof after);
    close(fd);
    assert_string_not_equal(after, before);
    command_result r;
    run(&r, "ls");
    assert_null(strstr(r.out, ".tmp-")); /* no temporary file left */
}

/* --force replaces a link at the key's path; it does not write a secret
 * key into whatever file the link names. */
static void keygen_force_replaces_a_symbolic_link(void **state)
{
    (void)state;
    char line[1024];
    run_ok("echo elsewhere > elsewhere.txt && ln -s elsewhere.txt linked.key");
    snprintf(line, sizeof line, "'%s' keygen --out linked --force", kiln_binary);
    run_ok(line);
    assert_true(S_ISREG(stat_of("linked.key", false).st_mode));
    assert_int_equal(mode_of("linked.key"), 0600);
    command_result r;
    run(&r, "cat elsewhere.txt");
    assert_string_equal(r.out, "elsewhere\n");
}

/* ev/y.npy (3.0 everywhere) with its last element made `last`: the
 * elements of a little-endian f64 .npy end the file. */
static void write_expected_with_last(const char *name, double last)
{
    char from[512], to[512];
    snprintf(from, sizeof from, "%s/ev/y.npy", harness_work_dir);
    snprintf(to, sizeof to, "%s/%s", harness_work_dir, name);
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    unsigned char bytes[4096];
    size_t size = fread(bytes, 1, sizeof bytes, in);
    fclose(in);
    assert_true(size > 6 * sizeof last && size < sizeof bytes);
    memcpy(bytes + size - sizeof last, &last, sizeof last);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, size, out), size);
    fclose(out);
}

/* An expected 3.1 where the program gives 3.0: refused, exit 1, the file
 * byte for byte as it was; --force seals it (and kiln verify then fails
 * it); a right expectation is added. */
static void evidence_add_refuses_a_case_that_fails_here(void **state)
{
    (void)state;
    command_result r;
    write_expected_with_last("y-wrong.npy", 3.1);
    run_ok("cp scale.kiln checked.kiln && cp scale.kiln checked-before.kiln");
    run(&r, "'%s' evidence add checked.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y=y-wrong.npy",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.out, "");
    assert_contains(r.err, "kiln: error: checked.kiln: evidence 'ones' does not hold on this runtime: output 'y': "
                           "1 of 6 elements outside atol 1e-06 + rtol 1e-05 (max abs error 0.1, max rel error "
                           "0.0323); correct the expected values, or force it to seal the case anyway "
                           "(kiln evidence add --force; kiln verify will then fail it)\n");
    run_ok("cmp checked.kiln checked-before.kiln");

    /* Exact comparison: the rule is named as such. */
    run(&r, "'%s' evidence add checked.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y=y-wrong.npy --exact -o never.kiln",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "output 'y': 1 of 6 elements outside exact (max abs error 0.1");
    assert_false(exists("never.kiln"));

    run(&r, "'%s' evidence add checked.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y=y-wrong.npy --force -o forced.kiln",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "added evidence 'ones' to forced.kiln\n");
    assert_string_equal(r.err, "kiln: warning: sealed because of --force: evidence 'ones' does not hold on this "
                               "runtime: output 'y': 1 of 6 elements outside atol 1e-06 + rtol 1e-05 (max abs "
                               "error 0.1, max rel error 0.0323); kiln verify will fail it here\n");
    run_ok("cmp checked.kiln checked-before.kiln");
    run(&r, "'%s' verify forced.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.out, "ones             FAIL  y: max abs error 0.1");

    run(&r, "'%s' evidence add checked.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y=ev/y.npy --exact",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
    run(&r, "'%s' verify checked.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "ones             pass  y: max abs error 0");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_writes_cli KILN_BINARY SCALE_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln_binary = argv[1];
    scale_binary = argv[2];
    source_root = argv[3];
    if (harness_init("kiln-writes") != 0) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sign_keeps_a_private_artifact_private),
        cmocka_unit_test(evidence_add_keeps_a_private_artifact_private),
        cmocka_unit_test(sign_writes_through_a_symbolic_link),
        cmocka_unit_test(evidence_add_writes_through_a_symbolic_link),
        cmocka_unit_test(keygen_force_writes_new_files),
        cmocka_unit_test(keygen_force_replaces_a_symbolic_link),
        cmocka_unit_test(evidence_add_refuses_a_case_that_fails_here),
    };
    int failed = cmocka_run_group_tests(tests, setup, NULL);
    harness_cleanup();
    return failed;
}
