// A minimal app that embeds the iki player (docs/embed.md): no framework, no bundler, the
// library installed from the service (`npm install <service>/downloads/iki-core.tgz`) and
// served from this app's origin. The service is `?service=<origin>` (its IKI_CORS_ORIGINS
// must list this app's origin when it is another one). It signs in with a bearer token,
// lists the buyer's licenses, opens one in memory (in the library's worker), and loads the
// model's textures by URL with plain <img> elements, as any runtime would.
import { ApiClient, LicensePlayer, PackageUrls } from './node_modules/@iki/core/dist/iki-core.js';

/** Every string a person reads, in one place. */
const WORDS = {
  title: 'Embedded iki player',
  email: 'E-mail',
  password: 'Password',
  signIn: 'Sign in',
  modelUrl: 'Model URL:',
  close: 'Close',
  signingIn: 'Signing in…',
  opening: 'Opening…',
  opened: 'Opened in memory.',
  open: 'Open',
  failed: 'Failed:',
};

const LIB = './node_modules/@iki/core/dist/';
const service = new URL(location.href).searchParams.get('service') ?? location.origin;
const $ = (id) => document.getElementById(id);
let token = null;
const api = new ApiClient({ baseUrl: service, token: () => token });
const player = new LicensePlayer({ workerUrl: `${LIB}license-worker.js`, wasmUrl: `${LIB}iki_wasm_bg.wasm`, token: () => token, baseUrl: service });
const urls = PackageUrls.register({ serviceWorkerUrl: './sw.js', scope: './' });
let served = null;

$('title').textContent = WORDS.title;
for (const node of document.querySelectorAll('[data-words]')) node.textContent = WORDS[node.dataset.words];
const say = (text) => { $('status').textContent = text; };

function close() {
  served?.close();
  served = null;
  player.close();
  $('textures').replaceChildren();
  $('model').hidden = true;
}

async function open(license) {
  close();
  say(WORDS.opening);
  try {
    await player.open(license.licenseId);
    served = (await urls).serve(player.resolver, {
      licenseId: license.licenseId,
      // The URLs stop answering once the service no longer lets this buyer open the license.
      stillValid: async () => (await api.call(`/api/licenses/${license.licenseId}`)).revokedAt === null,
      onEnded: close,
    });
    $('model-url').textContent = served.modelUrl;
    const model = await (await fetch(served.modelUrl)).json();
    for (const texture of model.FileReferences?.Textures ?? []) {
      const img = document.createElement('img');
      img.src = new URL(texture, served.modelUrl).href;
      img.dataset.path = texture;
      img.alt = texture;
      $('textures').append(img);
    }
    await Promise.all([...$('textures').querySelectorAll('img')].map((img) => img.decode()));
    $('model').hidden = false;
    say(WORDS.opened);
  } catch (err) {
    close();
    say(`${WORDS.failed} ${err.message}`);
  }
}

$('close').addEventListener('click', close);
$('signin').addEventListener('submit', async (event) => {
  event.preventDefault();
  say(WORDS.signingIn);
  try {
    const session = await api.call('/api/sessions', { method: 'POST', json: { email: $('email').value, password: $('password').value } });
    token = session.accessToken;
    const { licenses } = await api.call('/api/licenses');
    $('licenses').replaceChildren(...licenses.map((license) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = `${WORDS.open} ${license.masterName}`;
      button.dataset.licenseId = license.licenseId;
      button.addEventListener('click', () => open(license));
      const item = document.createElement('li');
      item.append(button);
      return item;
    }));
    say('');
  } catch (err) {
    say(`${WORDS.failed} ${err.message}`);
  }
});
