"""The operations of the compiled exchange's programs (``mechfmu.master.exchange``, its C in exchange.c): their
codes, the FMI 2.0 function each calls, and what a failure of each names."""
from __future__ import annotations

(GET_REALS, SET_REALS, PASS, SET_TIME, SET_STATES, GET_DERIVATIVES, GET_INDICATORS, DO_STEP, GET_STATE, SET_STATE,
 FREE_STATE, COMPLETED_STEP, STEP_FROM, READ_REALS) = range(14)
#: the FMI function behind each operation that calls one (what a failure names)
CALLED = {GET_REALS: "reading outputs", SET_REALS: "setting inputs", SET_TIME: "fmi2SetTime",
          SET_STATES: "fmi2SetContinuousStates", GET_DERIVATIVES: "fmi2GetDerivatives",
          GET_INDICATORS: "fmi2GetEventIndicators", GET_STATE: "getFMUstate", SET_STATE: "setFMUstate",
          FREE_STATE: "freeFMUstate", COMPLETED_STEP: "fmi2CompletedIntegratorStep", STEP_FROM: "step",
          READ_REALS: "reading outputs"}
#: the FMI function each operation calls (fmpy's words for a failed one)
FUNCTION_OF = {GET_REALS: "fmi2GetReal", SET_REALS: "fmi2SetReal", SET_TIME: "fmi2SetTime",
               SET_STATES: "fmi2SetContinuousStates", GET_DERIVATIVES: "fmi2GetDerivatives",
               GET_INDICATORS: "fmi2GetEventIndicators", DO_STEP: "fmi2DoStep", GET_STATE: "fmi2GetFMUstate",
               SET_STATE: "fmi2SetFMUstate", FREE_STATE: "fmi2FreeFMUstate",
               COMPLETED_STEP: "fmi2CompletedIntegratorStep", STEP_FROM: "fmi2DoStep", READ_REALS: "fmi2GetReal"}
FUNCTIONS = tuple(dict.fromkeys(FUNCTION_OF.values()))  # in the order of exchange.c's Functions
#: the operations a slave counts per completed run of a program (``counted_codes`` of a slave, where it has one)
ALL_COUNTED = frozenset(FUNCTION_OF) - {STEP_FROM, READ_REALS}
