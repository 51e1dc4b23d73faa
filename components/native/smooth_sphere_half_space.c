/* SmoothSphereHalfSpaceForce (components/smooth_sphere_half_space.py: Simbody's law, its parameters and sources). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "native_variables.h"
#include "spatial.h"

#define V(name) n->values[SmoothSphereHalfSpaceForce__##name]

typedef struct {
    Vec position, velocity, angular_velocity;
    Mat rotation;
} Body;

/* a body's pose and velocity from its 13 inputs (position, orientation w x y z, velocity, angular velocity) */
static int body(NativeInstance *n, int first, const char *prefix, Body *b) {
    const double *v = n->values + first;
    const double *q = v + 3;
    if (0.0 + q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] == 0.0) {
        char name[64], text[512], w[40], x[40], y[40], z[40];
        native_repr(q[0], w, sizeof w), native_repr(q[1], x, sizeof x), native_repr(q[2], y, sizeof y);
        native_repr(q[3], z, sizeof z);
        snprintf(name, sizeof name, "%s.orientation", prefix);
        snprintf(text, sizeof text, "%s '%s': %s = (%s, %s, %s, %s) is not a rotation quaternion", n->cls->name,
                 native_instance_name(n), name, w, x, y, z);
        return native_fail_text(n, 0, "%s", text);
    }
    double unit[4];
    quat_normalize(q, unit);
    quat_to_matrix(unit, b->rotation);
    for (int i = 0; i < 3; ++i) b->position[i] = v[i], b->velocity[i] = v[7 + i], b->angular_velocity[i] = v[10 + i];
    return 0;
}

static void station_velocity(const Body *b, const double *point, double *out) {
    Vec arm, spin;
    vec_sub(point, b->position, arm);
    vec_cross(b->angular_velocity, arm, spin);
    vec_add(b->velocity, spin, out);
}

int native_SmoothSphereHalfSpaceForce_outputs(NativeInstance *n, double *out) {
    Body sphere, half_space;
    if (body(n, SmoothSphereHalfSpaceForce__sphere_position_x, "sphere", &sphere) != 0
        || body(n, SmoothSphereHalfSpaceForce__halfSpace_position_x, "halfSpace", &half_space) != 0)
        return -1;
    Mat half_space_rotation;
    body_xyz_rotation(V(halfSpaceOrientation_x), V(halfSpaceOrientation_y), V(halfSpaceOrientation_z),
                      half_space_rotation);
    const double *sphere_location = &V(sphereLocation_x), *half_space_location = &V(halfSpaceLocation_x);
    const double radius = V(radius), cf = V(constantContactForce), c = V(dissipation);
    Vec centre, centre_in_half_space, x_h, normal, point, t1, t2, v, v_tangent, force;
    mat_vec(sphere.rotation, sphere_location, t1);
    vec_add(sphere.position, t1, centre);
    vec_sub(centre, half_space.position, t1);
    mat_t_vec(half_space.rotation, t1, centre_in_half_space);
    mat_column(half_space_rotation, 0, x_h);
    vec_sub(centre_in_half_space, half_space_location, t1);
    vec_scale(-1.0, x_h, t2);
    const double indentation = -(vec_dot(t1, t2) - radius);
    mat_vec(half_space.rotation, x_h, normal);
    vec_scale(radius, normal, t1);
    vec_add(centre, t1, t1);
    vec_scale(0.5 * indentation, normal, t2);
    vec_sub(t1, t2, point);
    station_velocity(&sphere, point, t1);
    station_velocity(&half_space, point, t2);
    vec_sub(t1, t2, v);
    const double v_normal = vec_dot(v, normal);
    vec_scale(v_normal, normal, t1);
    vec_sub(v, t1, v_tangent);
    double power, k;
    if (native_pow(n, V(stiffness), 2.0 / 3.0, &power) != 0) return -1;
    k = 0.5 * power;
    double smoothed_root;
    if (native_pow(n, sqrt(indentation * indentation + cf), 1.5, &smoothed_root) != 0) return -1;
    const double fh_pos = (4.0 / 3.0) * k * sqrt(radius * k) * smoothed_root;
    const double fh_smooth = fh_pos * (0.5 + 0.5 * tanh(V(hertzSmoothing) * indentation));
    const double pe = 0.4 * fh_smooth * indentation;
    const double fhc_pos = fh_smooth * (1.0 + 1.5 * c * v_normal);
    const double on = c == 0 ? 1.0 : 0.5 + 0.5 * tanh(V(huntCrossleySmoothing) * (v_normal + 2.0 / (3.0 * c)));
    const double fhc_smooth = fhc_pos * on;
    vec_scale(fhc_smooth, normal, force);
    double v_slip;
    if (native_pow(n, vec_dot(v_tangent, v_tangent) + cf, 0.5, &v_slip) != 0) return -1;
    const double v_rel = v_slip / V(transitionVelocity);
    const double mu_s = V(staticFriction), mu_d = V(dynamicFriction);
    const double ff = fhc_smooth * ((1.0 < v_rel ? 1.0 : v_rel) * (mu_d + 2 * (mu_s - mu_d) / (1 + v_rel * v_rel))
                                    + V(viscousFriction) * v_slip);
    if (v_slip == 0.0) return native_fail_text(n, 1, "float division by zero");
    vec_scale(ff, v_tangent, t1);
    vec_scale(1.0 / v_slip, t1, t1);
    vec_add(force, t1, force);
    Vec on_sphere, arm;
    vec_scale(-1.0, force, on_sphere);
    out[0] = on_sphere[0], out[1] = on_sphere[1], out[2] = on_sphere[2];
    vec_sub(point, sphere.position, arm);
    vec_cross(arm, on_sphere, out + 3);
    out[6] = force[0], out[7] = force[1], out[8] = force[2];
    vec_sub(point, half_space.position, arm);
    vec_cross(arm, force, out + 9);
    out[12] = indentation;
    out[13] = point[0], out[14] = point[1], out[15] = point[2];
    out[16] = v_slip, out[17] = fhc_smooth, out[18] = pe, out[19] = -indentation;
    return 0;
}

/* --- analytic partials (SmoothSphereHalfSpaceForce.partial_pattern): the outputs' tangents ------------------- */

typedef struct {
    Vec position, velocity, angular_velocity;
    Mat rotation;
} BodyTangent;

static void body_tangent(const NativeInstance *n, int first, const double *seed, BodyTangent *d) {
    const double *q = n->values + first + 3, *dq = seed + 3;
    double unit[4], dunit[4];
    quat_normalize(q, unit);
    normalize_tangent(q, dq, dunit);
    quat_to_matrix_tangent(unit, dunit, d->rotation);
    for (int i = 0; i < 3; ++i)
        d->position[i] = seed[i], d->velocity[i] = seed[7 + i], d->angular_velocity[i] = seed[10 + i];
}

/* d(station velocity) = dv + dw x (point - p) + w x (dpoint - dp) */
static void station_velocity_tangent(const Body *b, const BodyTangent *d, const double *point, const double *dpoint,
                                     double *out) {
    Vec arm, darm, t1, t2;
    vec_sub(point, b->position, arm);
    vec_sub(dpoint, d->position, darm);
    vec_cross(d->angular_velocity, arm, t1);
    vec_cross(b->angular_velocity, darm, t2);
    vec_add(t1, t2, t1);
    vec_add(d->velocity, t1, out);
}

/* the 20 outputs' derivative along `seed` over the 26 inputs (the sphere's 13, then the half-space's) */
static int outputs_tangent(NativeInstance *n, const double *seed, double *dout) {
    Body sphere, half_space;
    BodyTangent ds, dh;
    if (body(n, SmoothSphereHalfSpaceForce__sphere_position_x, "sphere", &sphere) != 0
        || body(n, SmoothSphereHalfSpaceForce__halfSpace_position_x, "halfSpace", &half_space) != 0)
        return -1;
    body_tangent(n, SmoothSphereHalfSpaceForce__sphere_position_x, seed, &ds);
    body_tangent(n, SmoothSphereHalfSpaceForce__halfSpace_position_x, seed + 13, &dh);
    Mat half_space_rotation;
    body_xyz_rotation(V(halfSpaceOrientation_x), V(halfSpaceOrientation_y), V(halfSpaceOrientation_z),
                      half_space_rotation);
    const double *sphere_location = &V(sphereLocation_x), *half_space_location = &V(halfSpaceLocation_x);
    const double radius = V(radius), cf = V(constantContactForce), c = V(dissipation);
    Vec centre, dcentre, t1, t2, relative, drelative, local, dlocal, x_h, normal, dnormal, point, dpoint, v, dv, vt,
        dvt, force, dforce;
    mat_vec(sphere.rotation, sphere_location, t1);
    vec_add(sphere.position, t1, centre);
    mat_vec(ds.rotation, sphere_location, t1);
    vec_add(ds.position, t1, dcentre);
    vec_sub(centre, half_space.position, relative);
    vec_sub(dcentre, dh.position, drelative);
    mat_t_vec(half_space.rotation, relative, local);
    mat_t_vec(dh.rotation, relative, t1);
    mat_t_vec(half_space.rotation, drelative, t2);
    vec_add(t1, t2, dlocal);
    mat_column(half_space_rotation, 0, x_h);
    vec_sub(local, half_space_location, t1);
    const double indentation = vec_dot(t1, x_h) + radius, dindentation = vec_dot(dlocal, x_h);
    mat_vec(half_space.rotation, x_h, normal);
    mat_vec(dh.rotation, x_h, dnormal);
    for (int i = 0; i < 3; ++i) {
        point[i] = centre[i] + radius * normal[i] - 0.5 * indentation * normal[i];
        dpoint[i] = dcentre[i] + radius * dnormal[i] - 0.5 * (dindentation * normal[i] + indentation * dnormal[i]);
    }
    station_velocity(&sphere, point, t1);
    station_velocity(&half_space, point, t2);
    vec_sub(t1, t2, v);
    station_velocity_tangent(&sphere, &ds, point, dpoint, t1);
    station_velocity_tangent(&half_space, &dh, point, dpoint, t2);
    vec_sub(t1, t2, dv);
    const double v_normal = vec_dot(v, normal), dv_normal = vec_dot(dv, normal) + vec_dot(v, dnormal);
    for (int i = 0; i < 3; ++i) {
        vt[i] = v[i] - v_normal * normal[i];
        dvt[i] = dv[i] - (dv_normal * normal[i] + v_normal * dnormal[i]);
    }
    double power;
    if (native_pow(n, V(stiffness), 2.0 / 3.0, &power) != 0) return -1;
    const double k = 0.5 * power, root = sqrt(indentation * indentation + cf);
    const double droot = indentation * dindentation / root;
    const double scale = (4.0 / 3.0) * k * sqrt(radius * k);
    const double fh_pos = scale * pow(root, 1.5), dfh_pos = scale * 1.5 * sqrt(root) * droot;
    const double hertz = tanh(V(hertzSmoothing) * indentation);
    const double switch_on = 0.5 + 0.5 * hertz;
    const double dswitch_on = 0.5 * (1.0 - hertz * hertz) * V(hertzSmoothing) * dindentation;
    const double fh = fh_pos * switch_on, dfh = dfh_pos * switch_on + fh_pos * dswitch_on;
    const double fhc_pos = fh * (1.0 + 1.5 * c * v_normal);
    const double dfhc_pos = dfh * (1.0 + 1.5 * c * v_normal) + fh * 1.5 * c * dv_normal;
    double on = 1.0, don = 0.0;
    if (c != 0) {
        const double t = tanh(V(huntCrossleySmoothing) * (v_normal + 2.0 / (3.0 * c)));
        on = 0.5 + 0.5 * t, don = 0.5 * (1.0 - t * t) * V(huntCrossleySmoothing) * dv_normal;
    }
    const double fhc = fhc_pos * on, dfhc = dfhc_pos * on + fhc_pos * don;
    const double v_slip = sqrt(vec_dot(vt, vt) + cf), dv_slip = vec_dot(vt, dvt) / v_slip;
    const double v_tr = V(transitionVelocity), v_rel = v_slip / v_tr, dv_rel = dv_slip / v_tr;
    const double mu_s = V(staticFriction), mu_d = V(dynamicFriction), mu_v = V(viscousFriction);
    const double capped = 1.0 < v_rel ? 1.0 : v_rel, dcapped = 1.0 < v_rel ? 0.0 : dv_rel;
    const double stribeck = mu_d + 2 * (mu_s - mu_d) / (1 + v_rel * v_rel);
    const double dstribeck = -4 * (mu_s - mu_d) * v_rel * dv_rel / ((1 + v_rel * v_rel) * (1 + v_rel * v_rel));
    const double law = capped * stribeck + mu_v * v_slip;
    const double dlaw = dcapped * stribeck + capped * dstribeck + mu_v * dv_slip;
    const double ff = fhc * law, dff = dfhc * law + fhc * dlaw;
    for (int i = 0; i < 3; ++i) {
        force[i] = fhc * normal[i] + ff * vt[i] / v_slip;
        dforce[i] = dfhc * normal[i] + fhc * dnormal[i] + (dff * vt[i] + ff * dvt[i]) / v_slip
                    - ff * vt[i] * dv_slip / (v_slip * v_slip);
    }
    Vec arm, darm, don_sphere, on_sphere;
    vec_scale(-1.0, force, on_sphere);
    vec_scale(-1.0, dforce, don_sphere);
    memcpy(dout, don_sphere, sizeof don_sphere);
    vec_sub(point, sphere.position, arm);
    vec_sub(dpoint, ds.position, darm);
    vec_cross(darm, on_sphere, t1), vec_cross(arm, don_sphere, t2), vec_add(t1, t2, dout + 3);
    memcpy(dout + 6, dforce, sizeof dforce);
    vec_sub(point, half_space.position, arm);
    vec_sub(dpoint, dh.position, darm);
    vec_cross(darm, force, t1), vec_cross(arm, dforce, t2), vec_add(t1, t2, dout + 9);
    dout[12] = dindentation;
    memcpy(dout + 13, dpoint, sizeof dpoint);
    dout[16] = dv_slip, dout[17] = dfhc, dout[18] = 0.4 * (dfh * indentation + fh * dindentation);
    dout[19] = -dindentation;
    return 0;
}

/* by output, each on the inputs it depends on (SmoothSphereHalfSpaceForce.partial_pattern's order) */
int native_SmoothSphereHalfSpaceForce_partials(NativeInstance *n, double *out) {
    enum { INPUTS = 26, OUTPUTS = 20 };
    double jacobian[OUTPUTS][INPUTS];
    for (int j = 0; j < INPUTS; ++j) {
        double seed[INPUTS] = {0}, dout[OUTPUTS];
        seed[j] = 1.0;
        if (outputs_tangent(n, seed, dout) != 0) return -1;
        for (int i = 0; i < OUTPUTS; ++i) jacobian[i][j] = dout[i];
    }
    size_t k = 0;
    for (int i = 0; i < OUTPUTS; ++i)
        for (int j = 0; j < INPUTS; ++j)
            if (n->cls->feedthrough[i * INPUTS + j]) out[k++] = jacobian[i][j];
    return 0;
}
