export default function Training() {
  return <section><h1>Training</h1><p>Coming soon.</p></section>;
}
