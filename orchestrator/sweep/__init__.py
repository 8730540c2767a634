"""Parameter sweeps and Monte Carlo over any rig, run as Dask tasks (docs/sweeps.md).

Call order::

    spec = spec_from_file("sweeps/t1_gains.toml")        # or spec_from_args(rig, ...)
    result = run_sweep(spec, out_dir, workers=2)          # or scheduler="tcp://host:8786"
    make_report(out_dir)                                  # out_dir/report/report.md

``design`` makes the cases (grid, random, Latin hypercube; seeds from the sweep seed
and the case index), ``runner`` runs them (one moonpool run per Dask task),
``results`` writes the table (Parquet + CSV), ``report`` the plots and Markdown,
``cli`` is ``moonpool sweep``.
"""

from .design import Case, Distribution, SweepError, SweepSpec, case_seed, make_cases, spec_from_args, spec_from_file
from .report import make_report
from .runner import SweepResult, run_case, run_sweep

__all__ = ["Case", "Distribution", "SweepError", "SweepSpec", "SweepResult", "case_seed",
           "make_cases", "make_report", "run_case", "run_sweep", "spec_from_args",
           "spec_from_file"]
