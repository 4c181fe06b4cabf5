"""Figures of the papers that cannot be regenerated here, with the reason (data we cannot have)."""

NOT_REPRODUCIBLE = {
    "003 Figs 1-4 (and 7-9)": "test accuracy vs rounds on CIFAR-100, EMNIST, Shakespeare and "
    "Stack Overflow, re-fitting the top layer of pretrained networks: needs those datasets and "
    "the authors' pretrained models (replaced by the p003-* theory-vs-simulation figures)",
    "003 Figs 5-6": "accuracy vs personalization steps on the same pretrained networks "
    "(replaced by p003-finite-steps on the linear model)",
    "003 Figs 10-12": "per-client gains of personalization on EMNIST / CIFAR: same data",
    "004 Figs 1(b), 1(c), 1(e), 1(f)": "MNIST logistic regression and MNIST CNN: needs MNIST "
    "and a CNN training stack (PyTorch)",
    "004 Fig. 4": "MNIST test accuracy and training loss: needs MNIST",
    "004 Fig. 6": "local updates on MNIST logistic / CNN: needs MNIST and a CNN stack",
    "004 Table 3": "EMNIST / CIFAR-10 accuracies: needs those datasets and CNNs",
    "001 Fig. 1": "IAPGD+Katyusha, AL2SGD+ and L2SGD+ on LIBSVM logistic-regression datasets: "
    "needs the LIBSVM data (and Katyusha / AL2SGD+, not implemented in montecarlo)",
}
