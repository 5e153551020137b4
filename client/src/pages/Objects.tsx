export default function Objects() {
  return <section><h1>Objects</h1><p>Coming soon.</p></section>;
}
