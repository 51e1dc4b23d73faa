/*
 * A C host (no Python) of the FMI 3.0 co-simulation FMU of SmoothSphereHalfSpaceForce, for tests/test_fmi3_arrays.py:
 * its array variables (the sphere's position, quaternion, force) read and written whole, their directional and adjoint
 * derivatives against central differences, and every careless call on them refused (an element's own value
 * reference, nValues, nSeed or nSensitivity that do not count the elements, NULL arrays).
 *
 * Usage: fmi3_array_host BINARY RESOURCE_PATH TOKEN VR_POSITION VR_ORIENTATION VR_FORCE
 * Prints a line per check ("ok <what>" or "violation: <what>") and at the end "violations <n>"; exit status 0 if there
 * is none, 1 otherwise, 2 for a bad command line or a missing symbol.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "host_check.h"
#include "host_dl.h"


static void log_message(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category,
                        fmi3String message) {
    (void)environment, (void)category;
    if (getenv("FMI3_HOST_VERBOSE")) fprintf(stderr, "[%d] %s\n", (int)status, message);
}

#define FUNCTIONS(X)                                                                                              \
    X(InstantiateCoSimulation) X(FreeInstance) X(EnterInitializationMode) X(ExitInitializationMode)              \
    X(GetFloat64) X(SetFloat64) X(GetDirectionalDerivative) X(GetAdjointDerivative)
#define DECLARE(name) static fmi3##name##TYPE *name;
FUNCTIONS(DECLARE)

static fmi3ValueReference position, orientation, force;

/* the sphere's force [N] with its centre at p (the bodies' other inputs at their starts) */
static int force_at(fmi3Instance c, const double p[3], double f[3]) {
    return SetFloat64(c, &position, 1, p, 3) == fmi3OK && GetFloat64(c, &force, 1, f, 3) == fmi3OK;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: fmi3_array_host BINARY RESOURCE_PATH TOKEN VR_POSITION VR_ORIENTATION VR_FORCE\n");
        return 2;
    }
    void *library = host_open(argv[1]);
    if (!library) return 2;
    FUNCTIONS(HOST_LOAD_FMI3)
    position = (fmi3ValueReference)atoi(argv[4]), orientation = (fmi3ValueReference)atoi(argv[5]);
    force = (fmi3ValueReference)atoi(argv[6]);
    fmi3Instance c = InstantiateCoSimulation("arrays", argv[3], argv[2], fmi3False, fmi3False, fmi3True, fmi3True,
                                             NULL, 0, NULL, log_message, NULL);
    check(c != NULL, "instantiated");
    if (!c) return 1;
    check(EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) == fmi3OK, "initialization mode");

    /* a sphere pressed into the half-space (its solid side x > 0): a force in every direction of the indentation */
    const double p[3] = {0.05, 0.01, -0.02};
    double f[3], both[7], q[4];
    check(force_at(c, p, f) && fabs(f[0]) > 0, "an array written and read whole (3 values, one value reference)");
    fmi3ValueReference pair[2] = {force, orientation};
    check(GetFloat64(c, pair, 2, both, 7) == fmi3OK && !memcmp(both, f, sizeof f)
          && GetFloat64(c, &orientation, 1, q, 4) == fmi3OK && !memcmp(both + 3, q, sizeof q),
          "two arrays in one call: 3 + 4 values in order");
    double x[4];
    fmi3ValueReference element = force + 1;
    check(GetFloat64(c, &element, 1, x, 1) == fmi3Error, "an element's own value reference refused");
    check(GetFloat64(c, &force, 1, x, 2) == fmi3Error && GetFloat64(c, &force, 1, x, 4) == fmi3Error
          && SetFloat64(c, &position, 1, p, 1) == fmi3Error, "nValues other than the elements' count refused");
    check(GetFloat64(c, NULL, 1, x, 3) == fmi3Error && GetFloat64(c, &force, 1, NULL, 3) == fmi3Error,
          "NULL arrays refused");
    check(GetFloat64(c, &force, 1, x, (size_t)-1) == fmi3Error, "an nValues beyond any FMU refused");
    check(ExitInitializationMode(c) == fmi3OK, "initialized");

    /* d force / d position: one column per seed, against central differences */
    double columns[3][3], rows[3][3];
    int close = 1, directional = 1, adjoint = 1;
    for (int j = 0; j < 3; ++j) {
        double seed[3] = {0, 0, 0}, up[3], down[3], moved[3];
        seed[j] = 1.0;
        directional &= GetDirectionalDerivative(c, &force, 1, &position, 1, seed, 3, columns[j], 3) == fmi3OK;
        const double h = 1e-6;
        memcpy(moved, p, sizeof moved), moved[j] += h;
        close &= force_at(c, moved, up);
        memcpy(moved, p, sizeof moved), moved[j] -= h;
        close &= force_at(c, moved, down) && force_at(c, p, x);
        for (int i = 0; i < 3; ++i) {
            const double difference = (up[i] - down[i]) / (2 * h);
            close &= fabs(columns[j][i] - difference) <= 1e-5 * (fabs(difference) > 1.0 ? fabs(difference) : 1.0);
        }
        adjoint &= GetAdjointDerivative(c, &force, 1, &position, 1, seed, 3, rows[j], 3) == fmi3OK;
    }
    check(directional && close, "directional derivative of an array by an array: central differences to 1e-5");
    int transposed = adjoint;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) transposed &= rows[i][j] == columns[j][i];
    check(transposed, "adjoint derivative: the transposed products, to the bit");
    double seed[3] = {1, 0, 0}, out[3];
    check(GetDirectionalDerivative(c, &force, 1, &position, 1, seed, 1, out, 3) == fmi3Error
          && GetDirectionalDerivative(c, &force, 1, &position, 1, seed, 3, out, 1) == fmi3Error
          && GetAdjointDerivative(c, &force, 1, &position, 1, seed, 3, out, 2) == fmi3Error,
          "nSeed and nSensitivity that do not count the elements refused");
    check(GetDirectionalDerivative(c, &element, 1, &position, 1, seed, 3, out, 1) == fmi3Error
          && GetDirectionalDerivative(c, &force, 1, NULL, 1, seed, 3, out, 3) == fmi3Error,
          "an element's value reference and a NULL array refused in a derivative");
    FreeInstance(c);
    printf("violations %d\n", violations);
    return violations ? 1 : 0;
}
