/* The port algebra of the 1D connectors (components/connector.py) for a law written in C: the relative coordinate
 * and velocity, the element force and the law's own outputs, the flange forces and the tangents, the indicators. */
#ifndef MECHFMU_NATIVE_CONNECTOR_H
#define MECHFMU_NATIVE_CONNECTOR_H

#include "model.h"

typedef struct {
    /* f and the law's own outputs (parts, declared after f) at (q, v); 0, or -1 after native_fail */
    int (*law)(NativeInstance *, double q, double v, double *f, double *parts);
    /* (df/dq, df/dv) at (q, v) */
    int (*derivatives)(NativeInstance *, double q, double v, double *f_q, double *f_v);
    /* the event indicators at (q, v), NULL if none */
    int (*indicators)(NativeInstance *, double q, double v, double *out);
    size_t part_count, indicator_count;
    int factor0, factor1;           /* the gear factors' parameters (value references), -1: none (factor 1) */
    const int *state_outputs;       /* hidden-state slots output after the tangents */
    size_t state_output_count;
} ConnectorLaw;

/* Every output of a connector, in components/connector.py's order: s_rel, v_rel, f, the law's outputs, flange
 * forces, f_rate, tangents, state outputs, indicators. */
int connector_outputs(NativeInstance *n, const ConnectorLaw *law, double *out);
/* The analytic partials of components/connector.py's CONNECTOR_PARTIALS, in its order. */
int connector_partials(NativeInstance *n, const ConnectorLaw *law, double *out);
/* (q, v): the relative coordinate and velocity with the gear factors */
void connector_relative(const NativeInstance *n, const ConnectorLaw *law, double *q, double *v);

#endif
