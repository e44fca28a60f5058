"""Sweeps: notebooks run headlessly with papermill over (notebook x model x dataset [x shard]).

- :mod:`.jobs`: one job (its notebook, parameters and executed output), the plan of a sweep;
- :mod:`.revisions`: a model's Hub revisions (training checkpoints) as models of their own, ``<model>@<revision>``;
- :mod:`.dependencies`: which scoring jobs each analysis reads, so it runs (or is submitted) after them;
- :mod:`.model_kernel`: a model's scoring notebooks in one kernel that keeps it loaded (one Slurm task per model);
- :mod:`.launch`: the unfinished jobs run locally, or submitted as Slurm job arrays;
- :mod:`.slurm`: resource profiles, submitit, task records, Slurm's own view of the tasks;
- :mod:`.status`: done / running / pending / failed of each job, with the failing cell's error;
- :mod:`.examples`: ``make report``, notebooks 00-08 executed with small limits and rendered to HTML.

The usual calls are importable from here: ``from helpers import sweep; sweep.run(sweep.plan(...))``.
"""
from .jobs import NO_MODEL, Job, clean_partials, declared_parameters, find_notebook, finished, plan
from .dependencies import waits_on
from .launch import SweepFailed, SweepInterrupted, run

__all__ = ["NO_MODEL", "Job", "SweepFailed", "SweepInterrupted", "clean_partials", "declared_parameters", "find_notebook", "finished",
           "plan", "run", "waits_on"]
