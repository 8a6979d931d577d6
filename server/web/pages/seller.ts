/**
 * `/seller`: the seller's dashboard, wired from independent views: adding a master (exporting
 * a model folder in the browser, views/seller-export.ts; uploading a packed one with progress,
 * views/seller-upload.ts; and how to make one with the CLI, views/seller-service-key.ts) beside
 * the list of the seller's masters (views/seller-masters.ts), each opening into its licenses
 * panel (views/seller-master.ts), the search over every license (views/seller-search.ts) and
 * the API keys a shop's server uses (views/seller-api-keys.ts) its webhooks (views/seller-webhooks.ts) and its connected shops (views/seller-shops.ts). A view that adds to every master's panel registers itself
 * with `addMasterSection` here: each master's activity (views/seller-activity.ts, issue 29), whose
 * flags are listed above the masters (views/seller-activity-flags.ts).
 */
// uPlot's style sheet, for the activity plots (loaded with them when first shown; see seller-activity-chart.ts).
import 'uplot/dist/uPlot.min.css';
import { byId, renderSessionBar, requireSession } from '../views/dom.js';
import { apiKeysSection } from '../views/seller-api-keys.js';
import { webhooksSection } from '../views/seller-webhooks.js';
import { shopsSection } from '../views/seller-shops.js';
import { licenseSearchSection } from '../views/seller-search.js';
import { masterExportSection } from '../views/seller-export.js';
import { addMasterSection, loadMasters } from '../views/seller-masters.js';
import { activitySection, followActivityLink } from '../views/seller-activity.js';
import { flagsSection } from '../views/seller-activity-flags.js';
import { showServiceKey } from '../views/seller-service-key.js';
import { uploadForm } from '../views/seller-upload.js';

renderSessionBar();
if (requireSession(byId('gate')) !== null) {
  byId('dashboard').hidden = false;
  const list = byId('masters');
  // Issue 29: each master's activity, and above the masters the flags to look at (their links open a timeline).
  addMasterSection(activitySection);
  byId('masters-title').before(flagsSection(() => void loadMasters(list)));
  window.addEventListener('hashchange', () => followActivityLink());
  byId('add-column').prepend(masterExportSection((id) => void loadMasters(list, id)));
  // Below the masters, where the list of keys has the page's width.
  list.parentElement?.append(licenseSearchSection(), apiKeysSection(), webhooksSection(), shopsSection());
  uploadForm(byId<HTMLFormElement>('upload'), byId('upload-status'), { refresh: (open) => loadMasters(list, open) });
  void showServiceKey(byId('service-key'));
  void loadMasters(list).then(() => {
    // The CLI instructions are what a new seller needs first only where this browser cannot export a folder itself;
    // once there are masters they stay folded.
    const browserExport = 'webkitdirectory' in HTMLInputElement.prototype && typeof Worker !== 'undefined';
    if (!browserExport && list.querySelector('details.master') === null) byId<HTMLDetailsElement>('how-to').open = true;
    followActivityLink();
  });
}
