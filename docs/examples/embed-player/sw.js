// The package URLs' service worker, served from the app's own origin at the top of the app,
// so it may control the app's pages (a service worker controls only pages under its folder).
importScripts('./node_modules/@iki/core/dist/package-sw.js');
