/* Robertson's stiff chemical kinetics (Robertson 1966; Hairer & Wanner, ROBER):
 *   y1' = -k1 y1 + k3 y2 y3
 *   y2' =  k1 y1 - k3 y2 y3 - k2 y2^2
 *   y3' =  k2 y2^2
 * k1 = 0.04, k2 = 3e7, k3 = 1e4 (1/s); y(0) = (1, 0, 0). */
#include "robertson_vars.h"

void tf_model_init(TfSnapshot *s) { s->next_defined = 0; }

void tf_model_derivatives(TfSnapshot *s)
{
    const double y1 = s->r[V_y1], y2 = s->r[V_y2], y3 = s->r[V_y3];
    const double k1 = s->r[V_k1], k2 = s->r[V_k2], k3 = s->r[V_k3];
    s->r[V_der_y1] = -k1 * y1 + k3 * y2 * y3;
    s->r[V_der_y2] = k1 * y1 - k3 * y2 * y3 - k2 * y2 * y2;
    s->r[V_der_y3] = k2 * y2 * y2;
}

void tf_model_outputs(TfSnapshot *s) { (void)s; }
void tf_model_indicators(const TfSnapshot *s, double *z) { (void)s; (void)z; }
void tf_model_event(TfSnapshot *s) { (void)s; }
