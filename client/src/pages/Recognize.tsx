export default function Recognize() {
  return <section><h1>Recognize</h1><p>Coming soon.</p></section>;
}
