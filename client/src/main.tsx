import { render } from 'solid-js/web';
import { App } from './App';
import { registerOffline } from './pwa/register';
import './styles.css';

render(() => <App />, document.getElementById('root')!);
registerOffline();
