/*
TensorFlow.js: a JS number operand is a strong float32 tensor, so integer tensors become
float32 when combined with any number, and integer-valued creation defaults to float32.

NumPy 2 (NEP 50) treats a Python scalar as weak: it takes the tensor's dtype.
np.int32([1, 2]) + 1 is int32, np.where(c, 20, int32_array) is int32, np.full((3,), 236) and
np.arange(0, 6) are integer arrays (int64; int32 under an int32 default). TF.js converts every
JS number to a float32 tensor before promotion (it cannot tell 1 from 1.0), so tf.add(int32, 1)
is float32, and tf.fill, tf.range and tf.tensor of integer-valued numbers default to float32.
TF.js's in-place update v.assign(tf.add(v, 1)) of an int32 variable then throws "dtype of the
new value (float32) and previous value (int32) must match"; NumPy's `x += 1` keeps int32.
A bool tensor with a number likewise becomes float32 (NumPy: True + 1 is an int).

Breaks LZ-NUM-003 (Python scalars are weak) and LZ-NUM-015 (creation functions match the
oracle's dtype).
Seen on @tensorflow/tfjs-core 4.22.0 with @tensorflow/tfjs-backend-cpu 4.22.0, Node 20.
*/
import { createRequire } from "node:module";

const require = createRequire(new URL("../../src/minilazy/conformance/adapters/js/package.json", import.meta.url));
const tf = require("@tensorflow/tfjs-core");
require("@tensorflow/tfjs-backend-cpu");
tf.enableProdMode();
await tf.setBackend("cpu");

let wrong = 0;
const same = (a, b, rtol = 0) => a.length === b.length
  && a.every((v, i) => Object.is(v, b[i]) || Math.abs(v - b[i]) <= rtol * Math.abs(b[i]));
const text = (r) => ("error" in r ? `error (${r.error ?? "any"})`
  : `${r.dtype ?? ""}${r.shape ? `[${r.shape.map(String).join(", ")}]` : ""} ${JSON.stringify(r.values.map((v) => (Number.isFinite(v) ? v : String(v))))}`);
/** Run the TF.js call `fn`; compare with NumPy's answer: {dtype, shape, values, rtol}, or {error}. */
function check(what, fn, want) {
  let got;
  try {
    const t = fn();
    got = { dtype: t.dtype, shape: t.shape, values: Array.from(t.dataSync()) };
  } catch (e) {
    got = { error: e.message };
  }
  const ok = "error" in want ? "error" in got : !("error" in got) && same(got.values, want.values, want.rtol)
    && (want.dtype === undefined || got.dtype === want.dtype) && (want.shape === undefined || same(got.shape, want.shape));
  wrong += !ok;
  console.log(`${what}: TF.js ${text(got)}; NumPy ${text(want)}${ok ? "" : "   <-- wrong"}`);
}
const f32 = (values, shape = [values.length]) => tf.tensor(values, shape, "float32");
const i32 = (values, shape = [values.length]) => tf.tensor(values, shape, "int32");
const bool = (values, shape = [values.length]) => tf.tensor(values, shape, "bool");

check("add(int32 [1, 2], 1)", () => tf.add(i32([1, 2]), 1), { dtype: "int32", values: [2, 3] });
check("mul(bool [true, true], 1)", () => tf.mul(bool([true, true]), 1), { dtype: "int32", values: [1, 1] });
check("where(bool [true, false], 20, int32 [5, 6])", () => tf.where(bool([true, false]), 20, i32([5, 6])), { dtype: "int32", values: [20, 6] });
check("fill([3], 236)", () => tf.fill([3], 236), { dtype: "int32", values: [236, 236, 236] });
check("range(0, 6, 1)", () => tf.range(0, 6, 1), { dtype: "int32", values: [0, 1, 2, 3, 4, 5] });
check("tensor([[1], [2]])", () => tf.tensor([[1], [2]]), { dtype: "int32", values: [1, 2] });
check("variable(int32 [1, 2]).assign(add(v, 1))", () => {
  const v = tf.variable(i32([1, 2]), false);
  v.assign(tf.add(v, 1));
  return v;
}, { dtype: "int32", values: [2, 3] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
