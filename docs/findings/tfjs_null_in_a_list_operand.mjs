/*
TensorFlow.js: a null inside a list operand is taken as 0, and a ragged list is accepted.

NumPy refuses an operand list that holds something other than numbers: np.add(x, [1, None, 2])
raises TypeError ("unsupported operand type(s) for +: 'float' and 'NoneType'"), and
np.asarray([[1], 2]) ValueError ("inhomogeneous shape"). TF.js converts the list silently:
tf.add(x, [1, null, 2]) with x = [1, 2, 3] returns [2, 2, 5] (the null read as 0; None is the
protocol's null), tf.mul([1, null, 2], x) [1, 0, 6], and tf.tensor([[1], 2]) is a [2, 1]
tensor [[1], [2]].

Breaks LZ-ERR-008 (an operand that is neither a tensor, a number nor array-like raises
TypeError at the call; found by its "None in a list operand" case).
Seen on @tensorflow/tfjs-core 4.22.0 with @tensorflow/tfjs-backend-cpu 4.22.0, Node 20.
*/
import { createRequire } from "node:module";

const require = createRequire(new URL("../../src/minilazy/conformance/adapters/js/package.json", import.meta.url));
const tf = require("@tensorflow/tfjs-core");
require("@tensorflow/tfjs-backend-cpu");
tf.enableProdMode();
await tf.setBackend("cpu");

let wrong = 0;
const text = (r) => ("error" in r ? `error (${r.error ?? "any"})`
  : `${r.dtype ?? ""}${r.shape ? `[${r.shape.map(String).join(", ")}]` : ""} ${JSON.stringify(r.values.map((v) => (Number.isFinite(v) ? v : String(v))))}`);
/** Run the TF.js call `fn`; NumPy raises `want.error` there: any result is wrong. */
function check(what, fn, want) {
  let got;
  try {
    const t = fn();
    got = { dtype: t.dtype, shape: t.shape, values: Array.from(t.dataSync()) };
  } catch (e) {
    got = { error: e.message };
  }
  const ok = "error" in got;
  wrong += !ok;
  console.log(`${what}: TF.js ${text(got)}; NumPy ${text(want)}${ok ? "" : "   <-- wrong"}`);
}
const x = () => tf.tensor([1, 2, 3], [3], "float32");

check("add(float32 [1, 2, 3], [1, null, 2])", () => tf.add(x(), [1, null, 2]), { error: "TypeError" });
check("mul([1, null, 2], float32 [1, 2, 3])", () => tf.mul([1, null, 2], x()), { error: "TypeError" });
check("tensor([[1], 2])", () => tf.tensor([[1], 2]), { error: "ValueError" });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
