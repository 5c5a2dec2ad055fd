/*
TensorFlow.js: numbers become bools by rounding (tf.tensor) or by byte truncation (tf.fill,
number operands of logical ops), not by "nonzero is true".

NumPy (and tf.cast) make every nonzero number True: np.array([0.5, -0.5, 1e-7, -3.6e175],
dtype=bool) is all True. tf.tensor(values, shape, "bool") gives [true, false, false, true]
(Math.round: -0.5 and 1e-7 round to 0); tf.fill([2], 0.25, "bool") and
tf.fill([1], -3.6e175, "bool") give false (the number stored in a Uint8Array: 0.25 -> 0,
-3.6e175 -> 0 mod 256). A number operand of a logical op goes the same way:
tf.logicalOr(bool [false], -1.19e-7) is [false] (NumPy: np.logical_or(False, -1.19e-7) is True).

Breaks LZ-NUM-015 (asarray, full and full_like convert values like NumPy) and LZ-NUM-003
(Python scalars are weak and keep their truth value).
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

check('tensor([0.5, -0.5, 1e-7, -3.6e175], "bool")', () => tf.tensor([0.5, -0.5, 1e-7, -3.6e175], [4], "bool"), { dtype: "bool", values: [1, 1, 1, 1] });
check('fill([2], 0.25, "bool")', () => tf.fill([2], 0.25, "bool"), { dtype: "bool", values: [1, 1] });
check('fill([1], -3.6e175, "bool")', () => tf.fill([1], -3.6e175, "bool"), { dtype: "bool", values: [1] });
check("logicalOr(bool [false], -1.19e-7)", () => tf.logicalOr(bool([false]), -1.19e-7), { dtype: "bool", values: [1] });
check('cast(float32 [0.5, -0.5, 1e-7], "bool")  (right)', () => tf.cast(f32([0.5, -0.5, 1e-7]), "bool"), { dtype: "bool", values: [1, 1, 1] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
