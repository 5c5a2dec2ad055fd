/*
TensorFlow.js: int32 arithmetic goes through floating point, so tf.square of int32 is rounded
to float32, and products that overflow int32 do not wrap around as integers do.

NumPy's int32 arithmetic is exact modulo 2**32: np.square(np.int32(10119)) is 102394161 (it fits
in int32), np.int32(-33642197) * np.int32(635715603) wraps to 1702710833, np.int32(-2097153) **
6 wraps to 12582913, and np.prod of int32 [95175, 19797616, -1710, 288863, -8376, -379, 1378,
-309341553] (in int32) is 139938304. TF.js's tf.square(int32) gives 102394160 (the product
rounded to float32's 24 bits), and tf.mul, tf.pow and tf.prod compute in doubles, which lose
the low bits once the true value passes 2**53, before the result is wrapped into an Int32Array:
1702710832, 0 and 0.

Breaks LZ-NUM-001 (integer results are exact), LZ-NUM-010 (prod) and LZ-NUM-014 (`x *= y`,
`x **= y`).
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

// NumPy's values: exact integer arithmetic wrapped to int32 (BigInt here, as NumPy's C loops).
const wrap = (b) => Number(BigInt.asIntN(32, b));
const PROD = [95175, 19797616, -1710, 288863, -8376, -379, 1378, -309341553];
check("square(int32 [10119])", () => tf.square(i32([10119])), { dtype: "int32", values: [wrap(10119n * 10119n)] });
check("mul(int32 [-33642197], int32 [635715603])", () => tf.mul(i32([-33642197]), i32([635715603])),
  { dtype: "int32", values: [wrap(-33642197n * 635715603n)] });
check("pow(int32 [-2097153], int32 [6])", () => tf.pow(i32([-2097153]), i32([6])), { dtype: "int32", values: [wrap((-2097153n) ** 6n)] });
check("prod(int32 [95175, ..., -309341553])", () => tf.prod(i32(PROD)),
  { dtype: "int32", values: [wrap(PROD.reduce((p, v) => p * BigInt(v), 1n))] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
