/* FMI 3 arrays: y[3] = gain * u[3] (an input and an output of three Float64 each). */
#include "arrays_vars.h"

void tf_model_init(TfSnapshot *s) { s->next_defined = 0; }
void tf_model_derivatives(TfSnapshot *s) { (void)s; }

void tf_model_outputs(TfSnapshot *s)
{
    for (int k = 0; k < 3; k++) s->r[V_y + k] = s->r[V_gain] * s->r[V_u + k];
}

void tf_model_indicators(const TfSnapshot *s, double *z) { (void)s; (void)z; }
void tf_model_event(TfSnapshot *s) { (void)s; }
