"""Certified exact solutions of the tick's QP, so that OSQP runs only where none is found.

The QP is convex, so a point that satisfies its KKT conditions is its solution. The dual active-set
method (:mod:`app.ik._qp_active_set`) finds it to rounding in a few steps at these sizes (8-16
variables on the arms here, n + up to a few dozen rows), where OSQP's ADMM answers to its tolerance after tens of
iterations; OSQP runs only where the method cannot certify an answer (an infeasible QP, rows
dependent to rounding).
"""

from __future__ import annotations

from numba import njit

from app.ik._qp_active_set import active_set_solve

STEPS_PER_ROW = 4  # the active-set method's adds and drops allowed per row before OSQP takes over


@njit(cache=True)
def exact_solution_one(P, c, A, l, u, x):
    """The QP's solution into x (n,) when it can be certified; returns whether it could.

    The first n rows of A are the identity (the joint box): the answer is clipped into the box, so
    that the rounding the certificate allows (1e-9) never takes a joint past its velocity or position
    bound. Otherwise False (the caller runs OSQP).
    """
    if not active_set_solve(P, c, A, l, u, x, STEPS_PER_ROW * A.shape[0]):
        return False
    for i in range(c.shape[0]):
        x[i] = min(max(x[i], l[i]), u[i])
    return True
