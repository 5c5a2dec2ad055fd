/*
TensorFlow.js: arithmetic on bool tensors keeps the bool dtype but stores non-boolean values,
and NumPy's refusals of bool arithmetic are missing.

NumPy's add and multiply of bools are logical OR and AND with a bool result; TF.js adds the
stored 0/1 bytes and keeps dtype bool: tf.add(bool [true, true], bool [true, false]) holds
[2, 1], which tf.sum then counts as 3 (NumPy: [True, True], sum 2). concat([bool, float32])
likewise stores 2.5 as 2 in a bool (see tfjs_concat_mixed_dtypes.mjs). maximum and minimum of
bools give int32 (NumPy: bool); pow and remainder of bools give bool (NumPy: int8; TF.js has no
int8, so int32 would be its nearest). NumPy has no negative, sign or subtract for bools
(TypeError: "The numpy boolean negative, the `-` operator, is not supported"); TF.js computes
them (tf.neg(bool [true]) is bool [true]).

Breaks LZ-NUM-001 and LZ-NUM-002 (values and dtypes of elementwise ops), LZ-ERR-002 (an op given
dtypes NumPy has no loop for raises TypeError).
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

const tt = () => bool([true, true]), tf_ = () => bool([true, false]);
check("add(bool [T, T], bool [T, F])", () => tf.add(tt(), tf_()), { dtype: "bool", values: [1, 1] });
check("sum(add(bool [T, T], bool [T, F]))", () => tf.sum(tf.add(tt(), tf_())), { dtype: "int32", values: [2] });
check("mul(bool [T, T], bool [T, F])", () => tf.mul(tt(), tf_()), { dtype: "bool", values: [1, 0] });
check("maximum(bool [T, F], bool [F, F])", () => tf.maximum(tf_(), bool([false, false])), { dtype: "bool", values: [1, 0] });
check("pow(bool [T, F], bool [T, T])  (NumPy int8)", () => tf.pow(tf_(), tt()), { dtype: "int32", values: [1, 0] });
check("neg(bool [T])", () => tf.neg(bool([true])), { error: "TypeError" });
check("sign(bool [T])", () => tf.sign(bool([true])), { error: "TypeError" });
check("sub(bool [T], bool [T])", () => tf.sub(bool([true]), bool([true])), { error: "TypeError" });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
