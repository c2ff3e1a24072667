import './viewer.css';
import { mountRunPage } from './run-page.ts';
import { mountRunsPage } from './runs-page.ts';

/** Two pages, chosen by the path the server answered: /ui/ (runs) and /ui/runs/<id>. */
const root = document.getElementById('app');
if (root) {
  const match = /^\/ui\/runs\/([^/]+)\/?$/.exec(location.pathname);
  if (match?.[1]) mountRunPage(root, decodeURIComponent(match[1]));
  else mountRunsPage(root);
}
