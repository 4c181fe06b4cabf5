"""Shared test fixtures: the spectra the acceptance criteria name.

The suite runs BLAS on one thread. Its problems are small (d <= a few hundred), where a second
BLAS thread costs more in synchronisation than it gains, and the tests already run beside the
worker processes of the parallel sweeps: measured on a 2-core machine, six of the heaviest files
took 45 s of wall time with one thread against 122 s with two. The environment variable reaches
the BLAS libraries loaded later (scipy's own, the subprocesses of the CLI tests); the limit, the
ones a plugin may have loaded before this file.
"""

import ctypes
import gc
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _keep_freed_memory(mmap_threshold=32 << 20, trim_threshold=512 << 20):
    """glibc's malloc keeps freed memory for the next arrays instead of handing it back.

    By default it maps large arrays afresh (above 128 KB, a threshold that rises only as such
    arrays are freed) and hands the free top of the heap back at every free beyond a trim
    threshold that follows it: a loop building the same arrays again pays a page fault per
    4 KB each time (kernel time). Measured, tests/test_advise_uncertainty.py alone: 12.4 s
    user + 8.2 s kernel against 11.0 + 0.1 with these settings; one process over 615 tests
    (test_advise* to test_cli_fuzz) peaked at 386 MB resident. Arrays up to
    ``mmap_threshold`` (glibc's most) come from the heap and up to ``trim_threshold`` of free
    heap is kept. The
    environment variables reach the processes started later (the pytest-xdist workers, the
    command-line subprocesses, the docs build, joblib's workers); ``mallopt`` this one (with
    the variables' values where they were set before). No effect where the C library is not
    glibc (musl's mallopt is a stub, macOS has none)."""
    try:
        mmap_threshold = int(os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(mmap_threshold)))
        trim_threshold = int(os.environ.setdefault("MALLOC_TRIM_THRESHOLD_", str(trim_threshold)))
        mallopt = ctypes.CDLL(None).mallopt
    except (ValueError, OSError, AttributeError):     # a setting glibc ignores too; no glibc
        return
    mallopt(-3, mmap_threshold)     # M_MMAP_THRESHOLD
    mallopt(-1, trim_threshold)     # M_TRIM_THRESHOLD


_keep_freed_memory()

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from riskcalc import Spectrum  # noqa: E402

_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")


def empirical_10k():
    """A 10,000-atom empirical spectrum: eigenvalues of a Wishart-like sample, fixed seed."""
    rng = np.random.default_rng(20261122)
    return Spectrum.from_eigenvalues(rng.gamma(shape=2.0, scale=0.5, size=10_000))


SPECTRA = {
    "two-point": Spectrum.two_point(1.0, 4.0, 0.5),
    "two-point-aligned": Spectrum([0.1, 3.0], weights=[0.3, 0.7], signal_weights=[0.9, 0.1]),
    # j^-1 over 10,000 eigenvalues has condition number 1e4.
    "powerlaw-cond1e4": Spectrum.power_law(1.0, 10_000),
    "empirical-10k": empirical_10k(),
}


@pytest.fixture(params=list(SPECTRA), ids=list(SPECTRA))
def spectrum(request):
    return SPECTRA[request.param]


@pytest.fixture(scope="session")
def quick_catalogue(tmp_path_factory):
    """Every claim of ``paper_checks`` at quick sizes, run once for the session on 2 worker
    processes: ``{claim id: result}`` in catalogue order. The regression test compares all the
    verdicts with REPORT.md, and the tests of single verdicts read theirs here instead of
    running their claim again (a claim's seed depends on its id only, and its BLAS on one
    thread: the result is the same in a worker as in this process).

    Under pytest-xdist the first worker to need it runs it and leaves it in the run's shared
    temporary folder; another worker that needs it waits for that file (a lock) instead of
    running the catalogue again (its 2 processes keep both cores busy meanwhile). Measured:
    the second run cost 50 s when the figures' worker, free first, took the second reader."""
    import paper_checks

    def run():
        results = paper_checks.run_claims(paper_checks.select(), quick=True, n_jobs=2)
        return {r["id"]: r for r in results}

    try:
        import fcntl
    except ImportError:         # no POSIX locks: each worker runs its own
        fcntl = None
    if fcntl is None or not os.environ.get("PYTEST_XDIST_WORKER"):
        return run()
    import pickle

    shared = tmp_path_factory.getbasetemp().parent / "quick_catalogue.pickle"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            return pickle.loads(shared.read_bytes())
        found = run()
        staged = shared.with_suffix(".part")
        staged.write_bytes(pickle.dumps(found))
        os.replace(staged, shared)
        return found


@pytest.fixture(scope="session")
def quick_sensitivity(quick_catalogue):
    """``records(ids)``: the records of ``paper_checks.sensitivity.sensitivity`` for the claims
    ``ids`` at quick sizes, in the order of ``ids``. Each claim's mutants run once for the
    session (2 worker processes), and its unmutated verdict is the one of ``quick_catalogue``
    (the same check on the same seed) rather than a second run of it."""
    import paper_checks
    from paper_checks.sensitivity import sensitivity

    done = {}

    def records(ids):
        todo = [cid for cid in dict.fromkeys(ids) if cid not in done]
        if todo:
            found = sensitivity(paper_checks.select(None, todo), n_jobs=2,
                                verdicts={cid: quick_catalogue[cid]["verdict"] for cid in todo})
            for cid in todo:
                done[cid] = [r for r in found if r["id"] == cid]
        return [r for cid in dict.fromkeys(ids) for r in done[cid]]

    return records


@pytest.fixture
def fresh_sigma_edges():
    """Every edge scan solved anew in the test that asks for it (``one_step.edges`` and
    ``pencil_edges.edges`` forget what they kept): for the tests that bound the time of a
    refusal, which an earlier test's kept scans would make look fast when it solves them, and
    for those that watch the scans' inner steps."""
    from riskcalc.linear.dynamics.shift import one_step as shift_one_step
    from riskcalc.linear.dynamics.sigma import pencil_edges
    from riskcalc.linear.dynamics.sigma.fedavg import one_step

    one_step.edges.cache_clear()
    pencil_edges.edges.cache_clear()
    shift_one_step.EDGES_KEPT.clear()
    yield
    one_step.edges.cache_clear()
    pencil_edges.edges.cache_clear()
    shift_one_step.EDGES_KEPT.clear()


# The suite runs on two workers (README: pytest-xdist, ``--dist loadfile``): a worker takes one
# file at a time, the longest first, so that no long file is the tail of a run (xdist's own
# order is by number of tests; the files not listed here run last, in collection order: each
# took under about 1 s). The run's wall time is the busier worker's, so the longest
# first and the shortest last (a greedy balance: the last files to start are short, and
# whichever worker is free takes them). The four files that read the session's paper-checks
# catalogue follow the figures, one after the other: the worker that ran the catalogue
# (about 40 s) is usually the first free one when the next reader comes up, so it runs them
# all; a second worker that gets one waits for the first's catalogue (``quick_catalogue``: a
# file) rather than running it again. xdist's ``loadgroup``, which would pin them together,
# ignored its groups under pytest 9.2.
CATALOGUE_READERS = ("test_paper_checks.py", "test_paper_checks_algorithms.py",
                     "test_paper_checks_regression.py", "test_paper_checks_sensitivity.py")
# Measured (process CPU seconds, OMP_NUM_THREADS=1: a file alone less its ~2 s of start-up, or
# a group of files in one process with --durations=0 scaled to the group's CPU): the docs after
# the catalogue's readers, then every file of about 1 s and more, longest first. A new file of
# more than a few seconds belongs in this list (else it runs among the last). The 23 files of
# the rounds under a spectrum and of Algorithm 1 re-measured together (one process, 161 s of
# CPU) and re-sorted among the places they held; test_rounds_memory (1.7 s, 17.6 s in a loaded
# run, where it ran among the last) and test_rounds_edges (1.0 s) added.
# test_rounds_algorithm1_curves (7.1 -> 5.6 s: the reused entries of ``PsiLaws.cauchy``) and
# test_logistic_limits_simulation (4.0 -> 1.3 s: the bounds of ``separable``) moved down among
# the files of about their time.
# Re-measured (each file alone, with its start-up; a loaded machine): test_rounds_sigma_alg1_fold
# 18.6 s, test_rounds_sigma_alg1k 17.1, test_rounds_sigma_personalize 17.1, test_advise_rounds
# 16.0 (was 21st), test_rounds_sigma_k 15.4, test_rounds_sigma_alg1_complex 15.1,
# test_rounds_sigma_alg1_routes 13.9, test_finite_clients_sigma 13.8, test_alg1_large_step 13.3,
# test_rounds_sigma_kbig 11.6, test_advise_uncertainty 10.4, and about 7 s each (moved down
# among them) test_rounds_sigma_alg1chain, test_extension, test_advise_shift,
# test_alg1_large_step_sigma, test_properties_range, test_rounds_alg1_personalize. The files
# new since the last list, together in one process: test_rounds_shift_k about 18 s (it ran
# last, leaving the other worker idle that long), test_rounds_shift_compare about 3 s,
# test_hardening_thirteenth about 2 s, five more about 1 s; the rest under 1 s.
# Session 19's new files (each alone, less ~1.5 s of start-up, loaded): test_rounds_shift_own
# 18.5 s, test_rounds_shift_alg1 9.5, test_rounds_shift_alg1_personalize 5.8,
# test_hardening_fourteenth 2.3, test_rounds_shift_alg1_cli 2; test_rounds_shift_alg1_chain 13,
# test_rounds_shift_alg1_prox 5 (quiet); the rest under 1 s. test_rounds_shift: 46 s of CPU
# (104 s of wall, 6.3 GB resident: predict's own models at d = 100) -> 8.7 s at d = 10, in place.
# test_rounds_sigma_alg1_routes 11.8 -> 9.1 s (alone, with start-up; loaded): after
# test_advise_uncertainty (10.4 s), before test_rounds_sigma_personal_joint (9.0 s).
# Session 21: 15 files that were not listed (so ran last, in collection order), each measured in one
# process with the other 31 unlisted (loaded: about twice a quiet run): test_rounds_sigma_alg1_basis
# 6.2 s, beside test_rounds_shift_compare; test_advise_edge 4.0, test_hardening_ninth 3.7,
# test_cli_predict 3.7, test_hardening_logistic 3.7, test_logistic 3.3, test_finite_clients_cli
# 3.3, after test_hardening_thirteenth; eight of 1.4-2.1 s last; the other 31 under 1.2 s.
# Session 22 (a loaded full run, each file's in-process CPU): test_rounds_shift_kinf 7.4 s (was
# listed among the last files; it ran last on its worker) after test_rounds_shift_alg1 (8.3 s),
# test_rounds_leftovers 3.1 s after test_rounds_fast_rate (3.2 s).
# test_rounds_divergent_steps (3.7 s) after test_rounds_leftovers; test_hardening_seventeenth
# (2.9 s) after test_advise_hardening.
# Session 32: test_rounds_memory (about 7 s in a full run, 1.7 s before its personalization and
# exact prox checks) moved up beside the files of its time.
# Session 38 (each file's tests' process CPU, in one process with its group, loaded machine):
# test_rounds_alg1_pooled 10.3 s (8.1 s in a full run; was listed among files of 3-4 s) first of
# the rounds files; three unlisted files of about 1.5 s (test_rounds_near_threshold 1.6 s of CPU,
# test_hardening_twentyfifth 1.3 s, 1.9 s in a full run; test_hardening_progress 1.4 s, of
# sleeps) beside test_hardening_alpha (1.6 s). The order balances the two workers: replayed
# with the tests' durations of session 37's full runs, the busier worker finishes within 0.5 s
# of half the total.
# Session 40 (each test's process CPU, the 34 files after the docs in one process, load ~11):
# re-sorted by it, test_rounds_shift_own 9.9 s, test_rounds_shift_alg1_chain 9.6 and
# test_rounds_sigma_kbig 8.9 first (were 3rd, 19th and 18th), test_alg1_complex 6.0 and
# test_rounds_sigma_own_chain 5.3 up from the block's end; test_interrupt (0.2 s of CPU, its
# children's and their waits ~36 s of wall in that run) placed by its wall time;
# test_finite_clients_sigma 1.0 s, test_federation_file_verbs 0.6 and test_cli_json_standard
# (one child process) down among the files of about 1 s.
LONGEST_FIRST = ("test_figures.py",) + CATALOGUE_READERS + (
    "test_docs.py", "test_rounds_shift_own.py", "test_rounds_shift_alg1_chain.py",
    "test_rounds_sigma_kbig.py", "test_alg1_large_step.py", "test_rounds_alg1_pooled.py",
    "test_rounds_sigma_alg1_fold.py", "test_rounds_sigma_alg1k.py", "test_logistic_advise.py",
    "test_rounds_shift_k.py", "test_interrupt.py", "test_rounds_sigma_k.py",
    "test_alg1_complex.py", "test_finite_clients_sigma_simulation.py",
    "test_rounds_sigma_alg1_personalize.py", "test_advise_rounds.py",
    "test_rounds_sigma_own_chain.py", "test_rounds_shift_alg1.py",
    "test_rounds_sigma_personalize.py", "test_rounds_sigma_alg1_complex.py", "test_cli_fuzz.py",
    "test_rounds_sigma_local.py", "test_rounds_memory.py", "test_rounds_shift_kinf.py",
    "test_advise_weights.py", "test_advise_shift_gradients.py",
    "test_rounds_sigma_alg1_routes.py", "test_sigma_chain_arc.py",
    "test_rounds_sigma_personal_joint.py", "test_cli_plugins.py",
    "test_finite_clients_sigma_engine.py", "test_montecarlo_rounds_runner.py",
    "test_rounds_sigma_alg1chain.py",
    "test_extension.py", "test_advise_shift.py", "test_alg1_large_step_sigma.py",
    "test_properties_range.py", "test_rounds_alg1_personalize.py",
    "test_rounds_algorithm1_curves.py", "test_rounds_sigma_alg1_pooled.py",
    "test_rounds_shift_alg1_pooled.py",
    "test_rounds_shift_alg1_prox.py", "test_rounds_sigma_kinf.py", "test_fuzz40_scale.py",
    "test_hardening_sigma.py", "test_rounds_sigma_prox.py", "test_advise_uncertainty.py",
    "test_rounds_shift.py", "test_advise_shift_gradient.py",
    "test_hardening_eleventh.py", "test_logistic_pipeline.py", "test_rounds_fast_rate.py",
    "test_rounds_leftovers.py", "test_rounds_divergent_steps.py",
    "test_rounds_fixed_point_fast.py",
    "test_rounds_sigma.py", "test_advise.py", "test_advise_speed.py", "test_outputs_and_cache.py",
    "test_rounds_shift_compare.py", "test_rounds_sigma_alg1_basis.py",
    "test_montecarlo_algorithms.py", "test_rounds_budget.py",
    "test_figures_atomic.py", "test_advise_separable_fd.py", "test_logistic_finite_clients.py",
    "test_theory_vs_simulation.py", "test_fuzz_fourth.py", "test_rates_simulation.py",
    "test_fuzz37_fuzzlogi.py", "test_fuzz39_spec.py", "test_fuzz39_logi.py", "test_fuzz39_lead.py",
    "test_fuzz40_path.py", "test_fuzz40_fuzz.py", "test_fuzz40_logi.py",
    "test_hardening_thirteenth.py", "test_hardening_span.py", "test_rounds_near_threshold.py",
    "test_hardening_alpha.py", "test_hardening_twentyfifth.py", "test_hardening_progress.py",
    "test_finite_clients_sigma.py", "test_federation_file_verbs.py",
    "test_cli_json_standard.py",
    "test_hardening_twentythird.py", "test_hardening_rounds_lam.py",
    "test_hardening_rounds_rows.py",
    "test_hardening_files27.py", "test_hardening_lam27.py",
    "test_advise_edge.py", "test_hardening_ninth.py", "test_cli_predict.py",
    "test_hardening_logistic.py", "test_logistic.py", "test_finite_clients_cli.py",
    "test_hardening_fourteenth.py", "test_rounds_shift_alg1_pers_chain.py",
    "test_rounds_shift_alg1_personalize.py",
    "test_rounds_shift_own_chain.py", "test_hardening_fifteenth.py", "test_hardening_sixteenth.py",
    "test_advise_hardening.py", "test_hardening_seventeenth.py",
    "test_rounds_shift_alg1_cli.py", "test_montecarlo_rounds.py", "test_properties.py",
    "test_logistic_spectrum.py", "test_layers.py", "test_montecarlo_compare.py",
    "test_finite_clients_steps.py", "test_rounds_theory.py", "test_logistic_limits_simulation.py",
    "test_logistic_limits.py", "test_finite_clients_shift.py", "test_mp_quadrature_cancellation.py",
    "test_api.py", "test_steps_divergence.py", "test_fuzz_third.py", "test_rounds_pairs_speed.py",
    "test_hardening_rounds.py", "test_logistic_broadcast.py", "test_hardening_tenth.py",
    "test_finite_steps_general.py", "test_logistic_norm.py", "test_finite_steps.py",
    "test_montecarlo_rounds_personalize.py", "test_logistic_finite_grid.py", "test_cli_simulate.py",
    "test_rounds_algorithm1.py", "test_rounds_edges.py",
    "test_max_minutes.py",
    "test_montecarlo_rounds_alg1_closed.py", "test_algorithms.py", "test_rounds_cli.py",
    "test_finite_clients.py", "test_hardening_spectrum_ftfa.py", "test_logistic_sweep.py",
    "test_logistic_local_ridge.py",
    "test_sympy_identities.py", "test_rounds_personalize.py", "test_cli_logistic_family.py",
    "test_federation_file.py", "test_estimate.py", "test_rounds_odd_k_divergent.py",
    "test_front_door.py", "test_rounds_shift_prox_personal.py",
    "test_rounds_shift_pooled.py", "test_finite_clients_maml_sigma.py",
    "test_finite_clients_maml_pfedme.py", "test_advise_rtfa_infinite.py", "test_chain_basis.py",
    "test_rounds_cli_rtfa.py", "test_block_pencil.py", "test_golden.py",
    "test_montecarlo_measure.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


def pytest_collection_finish(session):
    """What collection left alive (the imported libraries, the test modules, their
    parameters) stays alive for the whole run; ``gc.freeze`` takes it out of the cycle
    collector's scans, which otherwise walk all of it at every full collection. Measured on 8
    of the heavier files in one process (loaded machine): the collector's time 1.31 -> 0.85 s
    (full collections 1.02 -> 0.55 s; 92,887 objects frozen). Garbage from before is
    collected first, not frozen."""
    gc.collect()
    gc.freeze()
