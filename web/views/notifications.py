"""What a person is sent: their subscriptions (watch a repository or a pull request, the kinds of
event, email or none), and the one-click unsubscribe an email links to.

The unsubscribe link is signed and names what it mutes and the version of the choice it was made
for: a forged, expired or already used link is refused. A GET shows a button (mail scanners fetch
links); the POST mutes, and is what a mail client's one-click unsubscribe (RFC 8058) sends, so it
needs no session and no CSRF token: the signature is the authority."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from core.errors import RecheckError
from core.vocabulary import events as ev
from notify.mail.services import subscription_set, subscription_unsubscribe
from notify.models import Subscription
from reviews.models import PullRequest
from reviews.selectors import readable_repositories


@login_required
@require_http_methods(["GET", "POST"])
def notifications_page(request):
    if request.method == "POST":
        repository = get_object_or_404(readable_repositories(request.user), slug=request.POST.get("repository", ""))
        number = request.POST.get("pull_request", "").strip()
        pull_request = None
        if number:
            pull_request = get_object_or_404(PullRequest, repository=repository,
                                             number=int(number) if number.isdigit() else -1)
        try:
            subscription_set(actor=request.user, repository=repository, pull_request=pull_request,
                             kinds=request.POST.getlist("kinds"), channel=request.POST.get("channel", "email"))
        except RecheckError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"Saved: {pull_request.reference if pull_request else repository.slug}.")
        return redirect("findings:notifications")
    subscriptions = (Subscription.objects.filter(user=request.user, repository__in=readable_repositories(request.user))
                     .select_related("repository", "pull_request").order_by("repository__slug", "pull_request__number"))
    return render(request, "notify/notifications.html", {
        "subscriptions": subscriptions, "kinds": ev.EVENT_KIND_LABELS.items(),
        "repositories": readable_repositories(request.user).order_by("slug"),
        "channels": Subscription.Channel.choices, "no_email": not request.user.email,
    })


@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token: str):
    if request.method == "GET":
        return render(request, "notify/unsubscribe.html", {"token": token})
    try:
        subscription = subscription_unsubscribe(token=token)
    except RecheckError as error:
        return render(request, "notify/unsubscribe.html", {"error": str(error)}, status=400)
    about = subscription.pull_request.reference if subscription.pull_request_id else subscription.repository.slug
    return render(request, "notify/unsubscribe.html", {"done": about})
