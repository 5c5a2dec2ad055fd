// jax-js: float64 transcendental functions are only float32-accurate on the Wasm backend.
//
// A float64 `sin`, `exp`, `tanh`, `log`, `arctan`... is correctly rounded to within a few ulp
// by NumPy (relative error ~1e-16). jax-js 0.1.25 returns float64 arrays whose values are off
// by ~1e-8 to ~1e-6 relative (e.g. `sin(0.1)`, `exp(1)`), i.e. computed to float32's accuracy,
// though with float64's range (`exp(float64 100)` is 2.69e43). `sqrt` (an IEEE op) is exact.
// (`power`: jaxjs_power.mjs.) The oracle met it as a float64 `tanh(x) * 1.5 - 2.5` off in the
// 9th digit and a 300-step float64 `sin` loop drifting.
//
// Breaks LZ-NUM-001 (elementwise results within the op's ulp tolerance) and LZ-LOW-002
// (64-bit data are computed in 64 bits).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and the exact (JavaScript
// Math, float64) values; exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const x = [0.1, 1.0, 2.5];
const f64 = (v) => np.array(new Float64Array(v), { dtype: np.float64 });
let bug = false;
for (const [name, exact] of [["sin", Math.sin], ["cos", Math.cos], ["exp", Math.exp], ["tanh", Math.tanh],
  ["log", Math.log], ["arctan", Math.atan], ["expm1", Math.expm1], ["sqrt", Math.sqrt]]) {
  const y = np[name](f64(x));
  const got = Array.from(y.dataSync());
  const want = x.map(exact);
  // 8 ulp of float64 is ~1.8e-15 relative (the oracle's "ulp" class)
  const rel = got.map((g, i) => Math.abs(g - want[i]) / Math.max(Math.abs(want[i]), Number.MIN_VALUE));
  const wrong = rel.some((r) => r > 1.8e-15);
  bug ||= wrong;
  console.log(`${name}(float64 ${JSON.stringify(x)}) -> ${y.dtype}: jax-js ${JSON.stringify(got)}; exact ${JSON.stringify(want)}; ` +
    `relative error ${rel.map((r) => r.toExponential(1)).join(", ")}${wrong ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
