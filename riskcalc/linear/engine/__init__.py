"""The random-matrix engine of the linear family: deterministic equivalents that know no method.

Marchenko-Pastur closed forms and quadrature (``marchenko_pastur``, ``mp_quadrature``), integrals
against the Sigma-weighted limiting spectrum (``weighted_mp``), the effective ridge kappa
(``kappa``), paper 003's own Stieltjes forms (Sec. 6.3, ``stieltjes``), chains and pencils of
generalized resolvents of one sample covariance (``resolvent_chain``, ``resolvent_pencil``,
``block_pencil``, assembled and followed along paths in ``pencil_assembly``), operator-valued
subordination for global models that filter the clients' covariances (``operator_subordination``),
and the joint spectral measure of commuting client covariances (``joint_spectrum``). The method
rooms (``finite_clients``, ``steps``, ``dynamics``) import this package; it imports none of them.
"""
