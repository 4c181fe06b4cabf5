"""The dask.distributed backend of ``montecarlo.runner.tasks.run_tasks`` (``scheduler=``):
a scheduler address checked at once where a connection would be refused, and the client whose
workers joblib uses for the duration."""

from __future__ import annotations

from joblib import parallel_config


def _refused(address) -> None:
    """ValueError at once where nothing listens at a tcp://host:port scheduler address with
    an IP address or localhost: the connection is refused in microseconds, but dask's Client
    retried for its 30 s timeout before saying so; host:port without a scheme is tcp, as dask
    reads it, and a port past 65535 is refused (both waited 30 s). Anything else (no answer,
    another scheme, a host name to resolve, which could wait on a resolver) is left to dask."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else "tcp://" + address)
    try:
        parts.port
    except ValueError:
        raise ValueError(f"scheduler {address!r}: the port is not a number in 0-65535 (give "
                         "tcp://host:port of a running dask scheduler, or 'local')") from None
    try:
        host, port = parts.hostname, parts.port
        if host != "localhost":
            ipaddress.ip_address(host or "")
    except (ValueError, TypeError):
        return
    if parts.scheme != "tcp" or port is None:
        return
    try:
        socket.create_connection((host, port), timeout=2.0).close()
    except ConnectionRefusedError:
        raise ValueError(f"scheduler {address!r}: connection refused, nothing listens there "
                         "(give tcp://host:port of a running dask scheduler, or 'local')"
                         ) from None
    except OSError:
        return


class _DaskBackend:
    """Context: a dask.distributed client whose workers joblib uses for the duration."""

    def __init__(self, address):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ValueError("scheduler needs dask.distributed: pip install 'fedrisk[cluster]'"
                             ) from None
        self._cluster = (LocalCluster(n_workers=1, threads_per_worker=1, processes=False)
                         if address == "local" else None)
        if self._cluster is None:
            _refused(address)
        try:
            self._client = Client(self._cluster if self._cluster is not None else address)
        except (ValueError, OSError) as exc:
            # dask's own text ("missing port number in address 'x'", a timeout) named no
            # option: the address is the user's --scheduler / scheduler=.
            raise ValueError(f"scheduler {address!r}: {exc} (give tcp://host:port of a "
                             "running dask scheduler, or 'local')") from None
        self._config = parallel_config(backend="dask")

    def __enter__(self):
        self._config.__enter__()
        return -1

    def __exit__(self, *exc):
        self._config.__exit__(*exc)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
