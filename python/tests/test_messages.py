"""Error messages say what a user can act on: positions in a matrix as
(i, j), numbers as Python writes them (never numpy 2's np.float64(...)), and
a prime modulus no backend takes as a ValueError naming the largest one
that is taken."""
import re

import numpy as np
import pytest

import topoml


def message(call):
    with pytest.raises(ValueError) as e:
        call()
    text = str(e.value)
    assert not re.search(r"np\.\w+\(", text), text
    return text


def test_a_bad_matrix_entry_is_named_by_row_and_column():
    D = np.zeros((4, 4))
    D[2, 3] = D[3, 2] = np.nan
    assert "entry (2, 3) is nan" in message(lambda: topoml.barcodes(D, distance_matrix=True))
    D[2, 3] = D[3, 2] = np.inf
    assert "(2, 3) is inf" in message(lambda: topoml.ripser(D, distance_matrix=True))


def test_numbers_in_messages_are_plain():
    X = np.random.default_rng(0).random((10, 2))
    D = np.array([[0, 1.5], [2.5, 0]])
    text = message(lambda: topoml.barcodes(D, distance_matrix=True))
    assert "is 2.5 but (0, 1) is 1.5" in text
    D = np.array([[0, 1.0], [1.0, 0.25]])
    assert "is 0.25" in message(lambda: topoml.barcodes(D, distance_matrix=True))
    assert "got -1.0" in message(lambda: topoml.barcodes(X, threshold=np.float64(-1)))
    assert "got 0" in message(lambda: topoml.ripser(X, coeff=np.int64(0)))
    assert "got -1" in message(lambda: topoml.barcodes(X, maxdim=np.int32(-1)))


@pytest.mark.parametrize("call", ["barcodes", "ripser", "ripser_parallel"])
def test_a_modulus_above_every_backend_is_a_value_error_naming_the_largest(call):
    largest = max(c.max_modulus for b in topoml.backends() if b.gate_state == "enabled"
                  for c in b.capabilities if c.op == "rips")
    p = 65537  # prime, above 65521 (the reference's largest)
    assert p > largest
    X = np.random.default_rng(1).random((12, 2))
    kw = {"modulus": p} if call == "barcodes" else {"coeff": p}
    text = message(lambda: getattr(topoml, call)(X, maxdim=1, **kw))
    assert "modulus %d" % p in text and str(largest) in text, text
    # the largest itself runs
    kw = {"modulus": largest} if call == "barcodes" else {"coeff": largest}
    getattr(topoml, call)(X, maxdim=1, **kw)
