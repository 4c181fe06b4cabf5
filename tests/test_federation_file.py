"""One federation file for every verb (riskcalc.federation_file, --federation/--target): bad
files get one clear error naming the file, the client and the key; the options that do not
apply with a file; bare lists are read as strictly by every verb. The verbs reading a good
file: tests/test_federation_file_verbs.py; the strict number layer: tests/test_strict_numbers.py."""

import json
import os

import pytest

import riskcalc
from riskcalc import federation_file
from tests.federation_helpers import CLIENTS, GOOD, _run, _text, _with, _write


# Each bad file -> the fragment its one-line error must contain (after the file's path).
BAD = [
    ("{", "not valid JSON"),
    (b'{"fedrisk_federation": 1, "clients": [{"name": "\xff"}]}', "not UTF-8 text (byte"),
    ('"federation"', "expected the federation object"),
    ({"clients": CLIENTS}, 'has no "fedrisk_federation" key'),
    ({**GOOD, "fedrisk_federation": 2}, "format version 2 is not supported"),
    ({**GOOD, "fedrisk_federation": "1"}, '"fedrisk_federation" must be the integer 1'),
    ({**GOOD, "fedrisk_federation": True}, '"fedrisk_federation" must be the integer 1'),
    ({**GOOD, "clientz": []},
     "unknown key 'clientz' (did you mean 'clients'?) (top-level keys of the schema"),
    ({**GOOD, "clients": []}, '"clients" must be a non-empty list'),
    ({**GOOD, "d": True}, "d must be an integer, got True (a boolean)"),
    ({**GOOD, "d": 100.5}, "d must be an integer, got 100.5"),
    ({**GOOD, "d": 10 ** 9}, "larger than 1e+07"),
    ({**GOOD, "signal": "2"}, "signal must be a number, got '2' (a string"),
    ({k: v for k, v in GOOD.items() if k != "d"}, "client 1 ('b'): gives n: the file needs "
                                                   '"d"'),
    (_with(2, gamma="1.5"), "client 2 ('c'): gamma must be a number, got '1.5' (a string"),
    (_with(2, gamma=True), "client 2 ('c'): gamma must be a number, got True (a boolean"),
    (_with(0, sigma=False), "client 0 ('a'): sigma must be a number, got False (a boolean"),
    (_with(0, r=[1.0]), "client 0 ('a'): r must be a number, got [1.0] (a list"),
    (_with(0, r=None), "client 0 ('a'): missing key r"),
    (_with(1, sigma=None), "client 1 ('b'): missing key sigma"),
    (_with(2, gamma=1e101), "client 2 ('c'): gamma must lie in [1e-100, 1e+100], got 1e+101"),
    (_with(2, sigma=-1), "client 2 ('c'): sigma must lie in [0, 1e+100], got -1"),
    (_with(0, n=200), "client 0 ('a'): give exactly one of gamma (d / n) and n"),
    (_with(1, n=None), "client 1 ('b'): give exactly one of gamma (d / n) and n"),
    (_with(1, n=50.5), "client 1 ('b'): n must be an integer, got 50.5"),
    (_with(0, gamma=10 ** 400), "client 0 ('a'): gamma must be a finite number in [1e-100"),
    (_with(1, n=10 ** 400), "client 1 ('b'): n must be an integer >= 1 and <= "
                            "9007199254740992, got 10000000000000000000...(401 characters)"),
    (_with(1, n=0), "client 1 ('b'): n must be an integer >= 1"),
    (_with(1, lamda=1), "client 1 ('b'): unknown key 'lamda' (client keys of the schema"),
    (_with(1, name="a"), "two clients are named 'a'"),
    (_with(1, name=7), "client 1: name must be a non-empty string, got 7"),
    (_with(2, spectrum=2), "client 2 ('c'): spectrum must be a SPEC string"),
    (_with(2, spectrum="nosuch"), "client 2 ('c'): spectrum: spectrum 'nosuch' is not one of"),
    (_with(2, spectrum="powerlaw:1,100000000"), "power-law size d must be an integer >= 1 "
                                                "and <= 10000000"),
    (_with(2, spectrum="file:missing.txt"), "client 2 ('c'): spectrum: spectrum file"),
    (_with(0, se=1), "client 0 ('a'): se must be an object of standard errors"),
    (_with(0, se={"r": "0.1"}), "client 0 ('a'): se.r must be a number, got '0.1'"),
    (_with(0, se={"lam": 0.1}), "client 0 ('a'): unknown key 'lam' (se keys of the schema"),
    (_text(GOOD).replace('"r": 0.5', '"r": NaN'), "client 1 ('b'): r must be a finite number, "
                                                  "got NaN"),
    (_text(GOOD).replace('"r": 0.5', '"r": 1e999'), "client 1 ('b'): r: '1e999' overflows: "
                                                    "beyond the largest float"),
    (_text(GOOD).replace('"r": 0.5', '"r": 0.5, "r": 0.7'), "client 1 ('b'): key r given "
                                                            "twice"),
    (_text(GOOD).replace('"d": 100', '"d": 100, "d": 100'), "key d given twice"),
    ('{"fedrisk_federation": 1, "clients": ' + "[" * 100000 + "]" * 100000 + "}",
     "JSON nested 100001 levels deep"),
    ('{"fedrisk_federation": 1, "clients": [{"se": {"r": [[1]]}}]}', "JSON nested 6 levels"),
]


@pytest.mark.parametrize("data, message", BAD, ids=range(len(BAD)))
def test_bad_federation_file_is_one_error_naming_file_client_key(data, message, tmp_path,
                                                                 capsys):
    path = _write(tmp_path, data)
    code, out, err = _run(["predict", "ftfa", "--federation", path], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --federation {path}") and err.count("\n") == 1, err
    assert message in err, err


def test_file_size_and_devices_are_bounded(tmp_path, capsys):
    """A file larger than a federation is refused before reading; a device is read at most
    MAX_BYTES + 1 bytes (/dev/zero does not hang)."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(federation_file.MAX_BYTES + 1)         # sparse: nothing written
    code, _, err = _run(["advise", "--federation", big], capsys)
    assert code == 2 and "larger than a federation file" in err and err.count("\n") == 1
    if os.path.exists("/dev/zero"):
        code, _, err = _run(["predict", "ftfa", "--federation", "/dev/zero"], capsys)
        assert code == 2 and "larger than a federation file" in err, err
        code, _, err = _run(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                             "--clients-file", "/dev/zero"], capsys)
        assert code == 2 and "larger than a federation file" in err, err


def test_byte_order_mark_and_directories(tmp_path, capsys):
    """A UTF-8 byte-order mark is not content (editors write one); a folder or a missing file
    is one line naming the option and the path."""
    path = _write(tmp_path, b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert riskcalc.Federation.from_file(path).m == 3
    for bad, message in ((tmp_path, "Is a directory"), (tmp_path / "no.json", "No such file")):
        code, _, err = _run(["advise", "--federation", bad], capsys)
        assert code == 2 and err.startswith(f"error: --federation {bad}: {message}"), err


@pytest.mark.parametrize("extra, message", [
    (["--gamma", "1"], "--gamma does not apply with --federation"),
    (["--r", "1"], "--r does not apply with --federation"),
    (["--sigma", "1"], "--sigma does not apply with --federation"),
    (["--clients", "3"], "give --clients M (identical clients) or --federation, not both"),
    (["--clients-file", "x.json"], "give --federation or --clients-file, not both"),
    (["--target", "3"], "--target '3': not a client of --federation"),
    (["--target", "z"], "a name: 'a', 'b', 'c'"),
    (["--d", "50"], "--d 50 differs from the d = 100"),
])
def test_federation_options(extra, message, tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    code, out, err = _run(["predict", "ftfa", "--federation", path, *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_target_and_bare_list_rules(tmp_path, capsys):
    path = _write(tmp_path, GOOD)
    bare = _write(tmp_path, [{"gamma": 2.0, "r": 0.5, "sigma": 1.0}], "bare.json")
    for argv, message in (
            (["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--target", "1"],
             "--target applies with --federation only"),
            (["predict", "ftfa", "--federation", bare], "got a bare list (read by "
                                                        "--clients-file)"),
            (["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--clients-file",
              bare, "--target", "0"], "--target applies with --federation (a bare"),
            (["compare", "ftfa", "--federation", path, "--d", "20", "--global", "oracle"],
             "applies with --global federated"),
            (["advise", "--federation", bare], "got a bare list")):
        code, _, err = _run(argv, capsys)
        assert code == 2 and err.count("\n") == 1 and message in err, err
    ambiguous = _write(tmp_path, _with(0, name="1"), "amb.json")
    code, _, err = _run(["predict", "ftfa", "--federation", ambiguous, "--target", "1"], capsys)
    assert code == 2 and "ambiguous" in err


@pytest.mark.parametrize("text, message", [
    ('[{"gamma": true, "r": 1, "sigma": 1}]', "client 0: gamma must be a number, got True"),
    ('[{"gamma": 2, "r": 1, "sigma": false}]', "client 0: sigma must be a number, got False"),
    ('[{"gamma": "1", "r": 1, "sigma": 1}]', "client 0: gamma must be a number, got '1'"),
    ('[{"gamma": 2, "r": 1, "r": 2, "sigma": 1}]', "client 0: key r given twice"),
    ('[{"gamma": 1e101, "r": 1, "sigma": 1}]', "gamma must lie in [1e-100, 1e+100]"),
    ("[" * 5000 + "]" * 5000, "JSON nested 5000 levels deep"),
])
def test_bare_lists_are_read_as_strictly_by_every_verb(text, message, tmp_path, capsys):
    """The fuzz's silent coercions (a bool or string read as a number, the last of two
    duplicate keys kept) and its RecursionError, through each verb's --clients-file."""
    path = _write(tmp_path, text)
    model = ["--gamma", "1", "--r", "1"]
    for argv in (["predict", "ftfa", *model, "--sigma", "1", "--clients-file", path],
                 ["compare", "ftfa", *model, "--sigma", "1", "--d", "20", "--global",
                  "federated", "--clients-file", path],
                 ["predict", "rtfa", "--model", "logistic", *model, "--signal", "1", "--lam",
                  "1", "--global-lam", "1", "--clients-file", path],
                 ["advise", "--clients-file", path]):
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        said = message.replace("[1e-100, 1e+100]", "[1e-16, 1e+10] with --model logistic") \
            if "logistic" in argv else message      # the family's own range (fuzz42 logi2 F2)
        assert err.startswith(f"error: --clients-file {path}: ") and said in err, (argv, err)
