import { render } from 'solid-js/web';
import { App } from './App';
import { registerOffline } from './pwa/register';
import './lib/people'; // display names ("Marie Curie") wherever a label is shown
import './styles.css';

render(() => <App />, document.getElementById('root')!);
registerOffline();
