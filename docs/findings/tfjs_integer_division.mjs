/*
TensorFlow.js: tf.div of two integer tensors floors and stays int32; tf.floorDiv of floats
returns int32.

NumPy's divide (the Array API's `/`) is true division: np.int32([7, -7]) / np.int32([2, 2]) is
[3.5, -3.5] (float64; float32 under a float32 default): int32 / int32 is never an integer
array. tf.div of two int32 (or bool) tensors instead calls floorDiv (Python 2's `/`):
int32 [3, -4]. `x /= y` on int32 tensors is then accepted where NumPy refuses the
float result (TypeError, same-kind casting).

NumPy's floor_divide keeps floats floats: np.float32([7.5, -7.5]) // np.float32([2, 2]) is
float32 [3, -4], and 1.0 // 0.0 is inf. tf.floorDiv returns int32 for every input dtype, so
the result is int32 and inf and NaN become 0 or garbage.

Breaks LZ-NUM-002 (result dtypes are NumPy 2's), LZ-NUM-001 (values) and LZ-NUM-014 (in-place
arithmetic).
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

check("div(int32 [7, -7], int32 [2, 2])", () => tf.div(i32([7, -7]), i32([2, 2])), { dtype: "float32", values: [3.5, -3.5] });
check("div(bool [true], bool [true])", () => tf.div(bool([true]), bool([true])), { dtype: "float32", values: [1] });
check("floorDiv(float32 [7.5, -7.5], float32 [2, 2])", () => tf.floorDiv(f32([7.5, -7.5]), f32([2, 2])), { dtype: "float32", values: [3, -4] });
check("floorDiv(float32 [1], float32 [0])", () => tf.floorDiv(f32([1]), f32([0])), { dtype: "float32", values: [Infinity] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
