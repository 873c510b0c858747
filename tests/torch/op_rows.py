"""Every torch row of the op table, from the families' files."""

import op_rows_elementwise
import op_rows_reduce
import op_rows_nn
import op_rows_losses
import op_rows_optim
import op_rows_shape

ROWS = (op_rows_elementwise.ROWS + op_rows_reduce.ROWS + op_rows_shape.ROWS +
        op_rows_nn.ROWS + op_rows_losses.ROWS + op_rows_optim.ROWS)

_labels = [r.label for r in ROWS]
assert len(_labels) == len(set(_labels)), "two rows with one label: " + str(
    sorted({x for x in _labels if _labels.count(x) > 1}))
