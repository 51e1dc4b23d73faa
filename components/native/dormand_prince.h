/* Dormand and Prince's RK5(4)7M (runtime.c's integration with intermediate inputs, mass_friction.c's hybrid motion):
 * nodes, the stages' weights, the fifth-order weights and the error's (fifth less fourth order). */
#ifndef MECHFMU_NATIVE_DORMAND_PRINCE_H
#define MECHFMU_NATIVE_DORMAND_PRINCE_H

static const double DP_C[7] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double DP_A[7][6] = {
    {0}, {1.0 / 5}, {3.0 / 40, 9.0 / 40}, {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
static const double DP_E[7] = {71.0 / 57600, 0.0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525,
                               -1.0 / 40};

#endif
