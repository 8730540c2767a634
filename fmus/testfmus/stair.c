/* Stair (time events): the counter steps by one every `period` seconds, at exact
 * times k * period; with stop_count > 0 the model asks to terminate the simulation
 * when the counter reaches it; with discard_count > 0 its co-simulation doStep returns
 * discard (without asking to terminate) when the counter reaches that. No continuous
 * states. */
#include "stair_vars.h"

void tf_model_init(TfSnapshot *s)
{
    s->next_defined = 1;
    s->next_event = s->time + s->r[V_period];
}

void tf_model_derivatives(TfSnapshot *s) { (void)s; }

void tf_model_outputs(TfSnapshot *s) { s->r[V_y] = (double)s->i[V_counter]; }

void tf_model_indicators(const TfSnapshot *s, double *z) { (void)s; (void)z; }

void tf_model_event(TfSnapshot *s)
{
    if (s->next_defined && s->time >= s->next_event - 1e-12 * (1.0 + s->next_event)) {
        s->i[V_counter] += 1;
        s->next_event += s->r[V_period];
        if (s->i[V_stop_count] > 0 && s->i[V_counter] >= s->i[V_stop_count]) s->terminate = 1;
        if (s->i[V_discard_count] > 0 && s->i[V_counter] >= s->i[V_discard_count]) s->discard = 1;
    }
}
